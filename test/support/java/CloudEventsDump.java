import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.cloudevents.CloudEvent;
import io.cloudevents.kafka.CloudEventDeserializer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a topic from the beginning with the CloudEvents Java SDK's Kafka
 * deserializer (binary and structured mode, chosen by the record's
 * content-type) and prints one JSON line per record: the parsed event's
 * attributes, extensions and data (UTF-8), or {"error": ...} for a record the
 * SDK rejects. Used by test/integration/cloudevents-format.test.ts.
 *
 * Usage: CloudEventsDump <bootstrap> <topic> <records> <timeoutMs>
 */
public final class CloudEventsDump {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    int want = Integer.parseInt(args[2]);
    long deadline = System.currentTimeMillis() + Long.parseLong(args[3]);
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, CloudEventDeserializer.class.getName());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    ObjectMapper json = new ObjectMapper();
    int seen = 0;
    try (KafkaConsumer<String, CloudEvent> consumer = new KafkaConsumer<>(props)) {
      List<TopicPartition> parts = new ArrayList<>();
      consumer.partitionsFor(topic, Duration.ofSeconds(30)).forEach(p -> parts.add(new TopicPartition(topic, p.partition())));
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      while (seen < want && System.currentTimeMillis() < deadline) {
        try {
          for (ConsumerRecord<String, CloudEvent> r : consumer.poll(Duration.ofMillis(500))) {
            seen++;
            CloudEvent e = r.value();
            ObjectNode line = json.createObjectNode();
            line.put("partition", r.partition());
            line.put("offset", r.offset());
            line.put("key", r.key());
            line.put("specversion", e.getSpecVersion().toString());
            line.put("id", e.getId());
            line.put("source", e.getSource().toString());
            line.put("type", e.getType());
            line.put("subject", e.getSubject());
            line.put("time", e.getTime() == null ? null : e.getTime().toString());
            line.put("datacontenttype", e.getDataContentType());
            ObjectNode ext = line.putObject("extensions");
            for (String name : e.getExtensionNames()) ext.put(name, String.valueOf(e.getExtension(name)));
            line.put("data", e.getData() == null ? null : new String(e.getData().toBytes(), StandardCharsets.UTF_8));
            System.out.println(json.writeValueAsString(line));
          }
        } catch (RecordDeserializationException ex) {
          seen++;
          ObjectNode line = json.createObjectNode();
          line.put("partition", ex.topicPartition().partition());
          line.put("offset", ex.offset());
          line.put("error", String.valueOf(ex.getCause()));
          System.out.println(json.writeValueAsString(line));
          consumer.seek(ex.topicPartition(), ex.offset() + 1);
        }
      }
    }
    System.out.flush();
    if (seen < want) {
      System.err.println("timed out: read " + seen + " of " + want + " records from " + topic);
      System.exit(2);
    }
  }
}
