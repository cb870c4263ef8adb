import io.apicurio.registry.serde.SerdeConfig;
import io.apicurio.registry.serde.avro.AvroKafkaDeserializer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads COUNT records of TOPIC from the beginning with Apicurio's Avro Kafka
 * deserializer, configured for the Confluent wire format (4-byte id after the
 * magic byte, the id being the registry's content id as its Confluent API
 * hands out), and prints one line per record: the outbox id header, a tab,
 * the decoded GenericRecord (JSON-like). Exits 1 if COUNT are not read in time.
 *
 * Usage: java -cp 'lib/*:.' ReadAvroRecords BOOTSTRAP TOPIC REGISTRY_V2_URL COUNT TIMEOUT_MS
 */
public class ReadAvroRecords {
  public static void main(String[] args) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "java-avro-reader-" + System.nanoTime());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, AvroKafkaDeserializer.class.getName());
    props.put(SerdeConfig.REGISTRY_URL, args[2]);
    props.put(SerdeConfig.ID_HANDLER, "io.apicurio.registry.serde.Legacy4ByteIdHandler");
    props.put(SerdeConfig.USE_ID, "contentId");
    int count = Integer.parseInt(args[3]);
    long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);
    int read = 0;
    try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(props)) {
      consumer.subscribe(List.of(args[1]));
      while (read < count && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, Object> record : consumer.poll(Duration.ofMillis(500))) {
          Header id = record.headers().lastHeader("id");
          String idText = id == null ? "" : new String(id.value(), StandardCharsets.UTF_8);
          System.out.println(idText + "\t" + record.value());
          read++;
        }
      }
    }
    System.out.flush();
    System.exit(read >= count ? 0 : 1);
  }
}
