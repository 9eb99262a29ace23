package dev.omnium.ops;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * The {@link MigrationGuard} as a Flyway callback (Flyway 10 and 11; the Spring Boot starter
 * registers it when Flyway is present): before each statement of a SQL migration it sets the lock
 * timeout and refuses a plain {@code CREATE INDEX} or a column type change on a big table;
 * {@link #migrate(Flyway)} retries a migration that gave up on a lock.
 *
 * <pre>{@code
 * FlywayMigrationGuard guard = new FlywayMigrationGuard(MigrationGuard.defaults());
 * Flyway flyway = Flyway.configure().dataSource(dataSource).callbacks(guard.callback()).load();
 * guard.migrate(flyway);
 * }</pre>
 *
 * <p>{@link #callback()} is a {@link Proxy} of Flyway's {@code Callback} interface as the running
 * Flyway defines it: Flyway 11.x later turned it into a generic interface, and a class compiled
 * against either shape breaks on the other (a missing bridge method, or a bridge naming a class
 * the older Flyway lacks, which fails Spring's introspection). It is called once per statement.
 *
 * <p>A retry is safe because Flyway runs each SQL migration of PostgreSQL in a transaction that a
 * failure rolls back whole (and records nothing), so the next {@code migrate()} starts it again;
 * a migration that ran outside a transaction and failed is recorded as failed by Flyway and is
 * never retried (its statements before the failure stay done: look, then {@code repair}). Java
 * migrations are not statements and are not guarded.
 */
public final class FlywayMigrationGuard {
  private static final String NAME = "omnium-ops migration guard";
  private final MigrationGuard guard;
  /** The session's lock_timeout to restore after a statement outside a transaction. */
  private final ThreadLocal<String> previous = new ThreadLocal<>();
  private final Callback callback;

  /**
   * @param guard the settings (lock timeout, retries, size threshold)
   */
  public FlywayMigrationGuard(MigrationGuard guard) {
    this.guard = guard;
    InvocationHandler h = this::invoke;
    this.callback = (Callback) Proxy.newProxyInstance(Callback.class.getClassLoader(),
        new Class<?>[] {Callback.class}, h);
  }

  /** @return the Flyway callback to configure ({@code callbacks(guard.callback())}) */
  public Callback callback() {
    return callback;
  }

  private Object invoke(Object proxy, Method m, Object[] args) {
    switch (m.getName()) {
      case "supports":
        return supports((Event) args[0]);
      case "canHandleInTransaction":
        return true;
      case "handle":
        handle((Event) args[0], (Context) args[1]);
        return null;
      case "getCallbackName":
      case "toString":
        return NAME;
      case "hashCode":
        return System.identityHashCode(proxy);
      case "equals":
        return proxy == args[0];
      default:
        throw new UnsupportedOperationException(m.toString());
    }
  }

  /** @return the guard's settings */
  public MigrationGuard guard() {
    return guard;
  }

  static boolean supports(Event event) {
    return event == Event.BEFORE_EACH_MIGRATE_STATEMENT
        || event == Event.AFTER_EACH_MIGRATE_STATEMENT
        || event == Event.AFTER_EACH_MIGRATE_STATEMENT_ERROR;
  }

  void handle(Event event, Context context) {
    try {
      if (event == Event.BEFORE_EACH_MIGRATE_STATEMENT) {
        String sql = context.getStatement().getSql();
        if (MigrationStatement.of(sql).concurrently() && transactionalLock(context)) {
          throw new MigrationRefusedException("refused: " + MigrationStatement.shorten(sql)
              + ": with Flyway's transactional lock (the default) a CONCURRENTLY statement waits"
              + " for Flyway's own lock transaction, which ends only after it: it would never"
              + " finish. Fix: set postgresql.transactional.lock=false (Spring Boot:"
              + " spring.flyway.postgresql.transactional-lock=false)");
        }
        previous.set(guard.beforeStatement(context.getConnection(), sql));
      } else {
        String p = previous.get();
        previous.remove();
        guard.afterStatement(context.getConnection(), p);
      }
    } catch (MigrationRefusedException e) {
      throw new FlywayException(e.getMessage(), e);
    } catch (SQLException e) {
      throw new FlywayException("omnium-ops migration guard: " + Sql.message(e), e);
    }
  }

  /**
   * Flyway's {@code postgresql.transactional.lock}, read through its plugin register (an
   * internal API, so by reflection); false when it cannot be read.
   */
  static boolean transactionalLock(Context context) {
    try {
      Object register = context.getConfiguration().getPluginRegister();
      Class<?> ext = Class.forName("org.flywaydb.database.postgresql"
          + ".PostgreSQLConfigurationExtension", false, register.getClass().getClassLoader());
      Object plugin = register.getClass().getMethod("getPlugin", Class.class)
          .invoke(register, ext);
      return plugin != null && (Boolean) ext.getMethod("isTransactionalLock").invoke(plugin);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }

  /**
   * {@code flyway.migrate()}, tried again (up to the guard's retries, after a growing pause) when
   * a migration gave up on a lock (55P03) and Flyway rolled it back.
   *
   * @param flyway a Flyway configured with this callback
   * @return Flyway's result
   * @throws FlywayException the last failure
   */
  public MigrateResult migrate(Flyway flyway) {
    try {
      return guard.retrying(() -> {
        try {
          return flyway.migrate();
        } catch (FlywayException e) {
          if (Sql.hasState(e, Sql.LOCK_NOT_AVAILABLE) && !anyFailed(flyway)) {
            throw new Retry(e);
          }
          throw e;
        }
      }, "Flyway migration");
    } catch (Retry r) {
      throw r.flyway;
    } catch (SQLException e) {
      throw new FlywayException(Sql.message(e), e);
    }
  }

  private static boolean anyFailed(Flyway flyway) {
    for (MigrationInfo i : flyway.info().all()) {
      if (i.getState() == MigrationState.FAILED) {
        return true;
      }
    }
    return false;
  }

  /** Carries a Flyway failure that may be retried through {@link LockRetry#retrying}. */
  private static final class Retry extends SQLException {
    private static final long serialVersionUID = 1L;
    final transient FlywayException flyway;

    Retry(FlywayException flyway) {
      super(flyway.getMessage(), Sql.LOCK_NOT_AVAILABLE, flyway);
      this.flyway = flyway;
    }
  }
}
