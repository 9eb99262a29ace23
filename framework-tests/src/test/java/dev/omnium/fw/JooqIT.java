package dev.omnium.fw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.jdbc.OmniumDataSource;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.DataSourceConnectionProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** jOOQ over {@link OmniumDataSource} (DataSource mode: the driver's own pools) with a DataSourceConnectionProvider. */
class JooqIT {
  static final String APP = "jooq";
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static OmniumDataSource ds;
  static DSLContext dsl;
  static DSLContext readOnlyDsl;

  /**
   * The read-only DSLContext of docs/frameworks.md: jOOQ has no read-only transaction flag, so the
   * connection provider declares it on every connection it hands out.
   */
  static final class ReadOnlyConnectionProvider extends DataSourceConnectionProvider {
    ReadOnlyConnectionProvider(javax.sql.DataSource ds) {
      super(ds);
    }

    @Override
    public Connection acquire() {
      Connection c = super.acquire();
      try {
        c.setReadOnly(true);
      } catch (SQLException e) {
        super.release(c);
        throw new DataAccessException("could not mark the connection read-only", e);
      }
      return c;
    }
  }

  @BeforeAll
  static void up() throws Exception {
    SANDBOX.execOnPrimary("CREATE TABLE book (id int PRIMARY KEY, title text NOT NULL)",
        "INSERT INTO book SELECT g, 'title ' || g FROM generate_series(1, 5) g");
    SANDBOX.awaitCaughtUp();
    ds = new OmniumDataSource(SANDBOX.url(APP, "heartbeatInterval=200ms&primaryPoolSize=3"));
    dsl = DSL.using(new DataSourceConnectionProvider(ds), SQLDialect.POSTGRES);
    readOnlyDsl = DSL.using(new ReadOnlyConnectionProvider(ds), SQLDialect.POSTGRES);
    Poll.until(Duration.ofSeconds(15), "read-only transactions to reach the replica",
        () -> readOnlyDsl.transactionResult(cfg -> where(cfg.dsl())).inRecovery());
  }

  @AfterAll
  static void down() throws Exception {
    if (ds != null) ds.close();
  }

  static Where where(DSLContext ctx) {
    Record r = ctx.resultQuery(Where.SQL).fetchOne();
    return new Where(r.get("in_recovery", Boolean.class), r.get("port", Integer.class), r.get("app", String.class),
        r.get("pid", Integer.class), r.get("read_only_default", Boolean.class));
  }

  void assertOnReplica(Where w) {
    Routes.assertOnReplica(w, SANDBOX, APP);
  }

  @Test
  void readOnlyTransactionResultRunsOnTheReplicaInOneSession() {
    List<Object> seen = readOnlyDsl.transactionResult(cfg -> {
      Where first = where(cfg.dsl());
      int books = cfg.dsl().fetchCount(DSL.table("book"));
      return List.of(first, books, where(cfg.dsl()));
    });
    Where first = (Where) seen.get(0);
    Where last = (Where) seen.get(2);
    assertOnReplica(first);
    assertOnReplica(last);
    assertEquals(first.pid(), last.pid(), "one transaction, one replica session");
    assertTrue((Integer) seen.get(1) >= 5);
  }

  @Test
  void transactionResultOnAConnectionFromReadIsOnTheReplica() throws Exception {
    try (Connection c = ds.read()) {
      Where w = DSL.using(c, SQLDialect.POSTGRES).transactionResult(cfg -> where(cfg.dsl()));
      assertOnReplica(w);
    }
  }

  @Test
  void nestedTransactionsUseSavepointsOnTheSameReplicaSession() {
    List<Where> seen = readOnlyDsl.transactionResult(outer -> {
      Where before = where(outer.dsl());
      Where inner = outer.dsl().transactionResult(nested -> where(nested.dsl()));
      return List.of(before, inner);
    });
    assertOnReplica(seen.get(0));
    assertEquals(seen.get(0).pid(), seen.get(1).pid());
  }

  @Test
  void readWriteTransactionResultRunsOnThePrimary() throws Exception {
    Where w = dsl.transactionResult(cfg -> {
      cfg.dsl().insertInto(DSL.table("book"), DSL.field("id"), DSL.field("title")).values(100, "written").execute();
      return where(cfg.dsl());
    });
    assertTrue(w.onPrimaryAs(APP, SANDBOX.primary().port()), "the primary's read-write route: " + w);
    assertEquals("written", SANDBOX.queryOne(SANDBOX.primary(), "SELECT title FROM book WHERE id = 100"));
  }

  @Test
  void writesInAReadOnlyTransactionAreRefusedAndRolledBack() throws Exception {
    DataAccessException e = assertThrows(DataAccessException.class, () -> readOnlyDsl.transaction(cfg ->
        cfg.dsl().insertInto(DSL.table("book"), DSL.field("id"), DSL.field("title")).values(200, "nope").execute()));
    assertEquals("25006", e.sqlState(), e.toString());
    assertFalse("1".equals(SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM book WHERE id = 200")));
    // the pool is healthy afterwards: the next read-only transaction still runs on the replica
    assertOnReplica(readOnlyDsl.transactionResult(cfg -> where(cfg.dsl())));
  }
}
