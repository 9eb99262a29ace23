/**
 * A disposable, real PostgreSQL primary with streaming replicas, for tests, benchmarks and demos.
 *
 * <p>In JUnit 5 tests register {@link dev.omnium.sandbox.testkit.PgSandbox} (the test kit: cluster,
 * heartbeat, URLs, driver shutdown, server logs of a failed test; see docs/testing.md); elsewhere
 * start one with {@link dev.omnium.sandbox.PgCluster#builder()}; run
 * {@code java -jar omnium-sandbox.jar --help} for a cluster on the command line.
 *
 * <p>Configuration:
 *
 * <ul>
 *   <li>{@code -Domnium.pg.version} / {@code OMNIUM_PG_VERSION}: "18" (default, 18.1.0) or "15"
 *       (15.14.0), the bundled binaries to use when the builder does not say;
 *   <li>{@code -Domnium.pg.bin} / {@code OMNIUM_PG_BIN}: a local install's bin directory (initdb,
 *       pg_ctl, postgres) to use instead of the bundled binaries;
 *   <li>{@code -Domnium.sandbox.trace=true}: start-up step timings on stderr.
 * </ul>
 *
 * <p>Files live under {@code java.io.tmpdir}: unpacked binaries in {@code omnium-pg-bin-USER},
 * data-directory templates and clusters in {@code omnium-pg-USER}. When the JVM runs as root the
 * servers run as {@code postgres} (or {@code nobody}) through {@code runuser}, because PostgreSQL
 * refuses to run as root.
 */
package dev.omnium.sandbox;
