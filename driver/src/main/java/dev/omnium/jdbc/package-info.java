/**
 * omnium-jdbc: a wrapping JDBC driver for PostgreSQL that sends read-only transactions to a
 * replica while its measured lag is under {@code maxAge}, and to the primary through a small,
 * capped fallback pool otherwise.
 *
 * <p>Applications use five public types:
 *
 * <ul>
 *   <li>{@link dev.omnium.jdbc.OmniumDriver}: the {@code jdbc:omnium:postgresql:} driver, for
 *       {@code DriverManager} and the application's own pool (HikariCP, Spring Boot);
 *   <li>{@link dev.omnium.jdbc.OmniumDataSource}: a pooled {@code DataSource} with explicit
 *       intents ({@code write()}, {@code read(maxAge)}, {@code readWithRetry(work)});
 *   <li>{@link dev.omnium.jdbc.OmniumConnection}: the logical connection both hand out;
 *   <li>{@link dev.omnium.jdbc.LagAlertListener}: told when a replica's lag alert fires and
 *       clears;
 *   <li>{@link dev.omnium.jdbc.RouterMXBean}: a router's counters and lag, over JMX
 *       ({@code dev.omnium:type=Router,name=<applicationName>}) and from
 *       {@code OmniumDataSource.metrics()}.
 * </ul>
 *
 * <p>Code decides what is a read: {@code Connection.setReadOnly(true)} before a unit of work
 * starts (Spring's {@code @Transactional(readOnly = true)} does it); everything else runs on the
 * primary, as with pgjdbc. Errors are {@link java.sql.SQLException}s with SQLStates: {@code 08001}
 * for an invalid URL or key (the message names the key), {@code 25006} for a write in read-only
 * work, {@code 40001} for a recovery conflict that could not be retried. No message, log line or
 * {@code toString()} contains a password.
 *
 * <p>Everything else in this package is package-private, but for one nested class,
 * {@code DeadlineSockets.Factory}, which is public only because pgjdbc instantiates it by name
 * (its {@code socketFactory} property, set by omnium on read sessions); applications do not use
 * it. The rules the driver keeps are in
 * <a href="../../../../../../../docs/routing-contract.md">docs/routing-contract.md</a>; the
 * classes, threads and pools behind them in
 * <a href="../../../../../../../docs/architecture.md">docs/architecture.md</a> (links relative
 * to this file in the source tree).
 */
package dev.omnium.jdbc;
