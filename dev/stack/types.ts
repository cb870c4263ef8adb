export type StackProvider = 'external' | 'testcontainers' | 'native';
export type StackProviderRequest = 'auto' | StackProvider;

/** Fault hooks for one server of the stack. */
export interface ServerControl {
  /** Sends a signal (default SIGKILL) and waits until the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Graceful stop. */
  stop(): Promise<void>;
  /** Starts again with the SAME data dir and port, and waits until ready. */
  start(): Promise<void>;
  /** postgres: pg_ctl stop -m fast|immediate, then start; kafka: kill -9, then start. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Main process id while running (for testcontainers: the container's init pid as seen by the Docker host). */
  pid(): number | undefined;
}

export interface StackVersions {
  postgres: string;
  kafka: string;
}

/** What a test or a tool needs to connect to a stack (serialisable). */
export interface StackConnection {
  provider: StackProvider;
  /** Superuser URL of a database on a server with wal_level=logical. */
  databaseUrl: string;
  /** e.g. ['127.0.0.1:39092'] */
  brokers: string[];
  versions: StackVersions;
  /** testcontainers only: the images the containers run. */
  images?: { postgres: string; kafka: string };
}

export interface StackHandle extends StackConnection {
  postgres: ServerControl;
  kafka: ServerControl;
  /** Temp dirs owned by this stack (native only); all removed by stop(). */
  workDirs: string[];
  /** Brokers of each extra Kafka listener (StartStackOptions.kafkaExtraListeners), as reached from this host. */
  kafkaListeners?: Record<string, string[]>;
  /** Stops both servers, leaves no process behind, removes temp dirs. Idempotent. */
  stop(): Promise<void>;
}

export interface ExternalStackConfig {
  databaseUrl: string;
  brokers: string[];
}

export interface StartStackOptions {
  /** Default: env OUTBOX_TAIL_STACK, else 'auto'. */
  provider?: StackProviderRequest;
  /** Extra postgresql.conf settings (native) / `-c` flags (testcontainers). */
  postgresSettings?: Record<string, string>;
  /** Extra server.properties settings (native) / KAFKA_* env (testcontainers). */
  kafkaSettings?: Record<string, string>;
  /**
   * Extra Kafka listeners, name -> security protocol, e.g. { RELAY: 'PLAINTEXT' }.
   * Each gets a free 127.0.0.1 port and is added to listeners, advertised.listeners
   * and listener.security.protocol.map. Their addresses are in
   * StackHandle.kafkaListeners. Native: configure them through kafkaSettings
   * (listener.name.<name in lower case>.*); testcontainers: PLAINTEXT only.
   */
  kafkaExtraListeners?: Record<string, string>;
  /**
   * For an extra listener, the host:port Kafka advertises for it instead of its
   * own address: a TCP proxy in front of it (the fault suite), so that clients
   * given the proxy stay behind it after the metadata round trip.
   */
  kafkaAdvertisedListeners?: Record<string, string>;
  /**
   * Native only: start the broker's JVM for a quick start rather than top speed (C1 JIT only, serial GC).
   * For stacks whose broker is killed and restarted again and again (the fault suite): a restart then
   * costs the machine far less CPU. Never for the bench, which measures the broker.
   */
  kafkaQuickStart?: boolean;
  /** Native only: extra `kafka-storage format` arguments, e.g. ['--add-scram', 'SCRAM-SHA-256=[name=u,password=p]']. */
  kafkaFormatArgs?: string[];
  /** Progress lines; default: silent. */
  log?: (line: string) => void;
  /** External servers; default from OUTBOX_TAIL_TEST_DATABASE_URL / OUTBOX_TAIL_TEST_BROKERS. */
  external?: ExternalStackConfig;
  /** Native only: Kafka version whose jars to run (default OUTBOX_TAIL_KAFKA_VERSION, else 4.1.1). */
  kafkaVersion?: string;
  /** Cache root holding kafka-<version>/lib; default OUTBOX_TAIL_CACHE_DIR or ~/.cache/outbox-tail. */
  cacheDir?: string;
  /** Directory with initdb/pg_ctl; default OUTBOX_TAIL_PG_BINDIR, else the newest /usr/lib/postgresql/N/bin, else PATH. */
  postgresBinDir?: string;
  /** java executable; default $JAVA_HOME/bin/java, else `java` on PATH. */
  javaBin?: string;
  /**
   * testcontainers only: images; default OUTBOX_TAIL_TC_POSTGRES_IMAGE /
   * OUTBOX_TAIL_TC_KAFKA_IMAGE, else postgres:17 and confluentinc/cp-kafka:8.1.1.
   */
  images?: { postgres?: string; kafka?: string };
  /** How long to wait for each server to become ready (default 60 s). */
  readyTimeoutMs?: number;
  /** How long `auto` waits for a container runtime to answer (default 5 s). */
  runtimeProbeTimeoutMs?: number;
  /**
   * Environment to take defaults from (default: process.env). Pass `{}` to
   * ignore the environment completely.
   */
  env?: Record<string, string | undefined>;
}
