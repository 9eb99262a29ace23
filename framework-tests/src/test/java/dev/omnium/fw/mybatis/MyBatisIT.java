package dev.omnium.fw.mybatis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.omnium.fw.Routes;
import dev.omnium.fw.boot.BootContext;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.dao.DataAccessException;

/** MyBatis mapper calls (mybatis-spring-boot-starter, Boot's HikariCP) routed by Spring's read-only transactions. */
class MyBatisIT {
  static final String APP = "mybatis";
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static ConfigurableApplicationContext context;
  static MyBatisApp.Shelf shelf;
  static MyBatisApp.BookMapper mapper;

  @BeforeAll
  static void up() throws Exception {
    SANDBOX.execOnPrimary("CREATE TABLE book (id int PRIMARY KEY, title text NOT NULL)",
        "INSERT INTO book SELECT g, 'title ' || g FROM generate_series(1, 5) g");
    SANDBOX.awaitCaughtUp();
    context = BootContext.start(MyBatisApp.class, SANDBOX, APP, "heartbeatInterval=200ms",
        "spring.datasource.hikari.maximum-pool-size=2");
    shelf = context.getBean(MyBatisApp.Shelf.class);
    mapper = context.getBean(MyBatisApp.BookMapper.class);
    Poll.until(Duration.ofSeconds(15), "read-only mapper calls to reach the replica",
        () -> ((Where) shelf.browse(1).get(0)).inRecovery());
  }

  @AfterAll
  static void down() throws Exception {
    if (context != null) context.close();
  }

  void assertOnReplica(Where w) {
    Routes.assertOnReplica(w, SANDBOX, APP);
  }

  void assertOnPrimary(Where w) {
    Routes.assertOnPrimary(w, SANDBOX, APP);
  }

  @Test
  void readOnlyMapperCallsRunOnTheReplicaInOneSession() {
    List<Object> seen = shelf.browse(3);
    assertOnReplica((Where) seen.get(0));
    assertEquals("title 3", seen.get(1));
    assertTrue(((List<?>) seen.get(2)).size() >= 5);
    assertOnReplica((Where) seen.get(3));
    assertEquals(((Where) seen.get(0)).pid(), ((Where) seen.get(3)).pid(), "one transaction, one replica session");
  }

  @Test
  void mapperWritesInATransactionRunOnThePrimary() throws SQLException {
    assertOnPrimary(shelf.add(100, "written"));
    assertEquals("written", SANDBOX.queryOne(SANDBOX.primary(), "SELECT title FROM book WHERE id = 100"));
  }

  @Test
  void mapperWritesInAReadOnlyTransactionAreRefused() throws SQLException {
    DataAccessException e = assertThrows(DataAccessException.class, () -> shelf.addInReadOnly(200, "nope"));
    assertEquals("25006", ((SQLException) e.getMostSpecificCause()).getSQLState(), e.toString());
    assertEquals("0", SANDBOX.queryOne(SANDBOX.primary(), "SELECT count(*) FROM book WHERE id = 200"));
  }

  /** Documented: a mapper called outside any read-only transaction is ordinary read-write work. */
  @Test
  void mapperCallsOutsideAReadOnlyTransactionRunOnThePrimary() {
    assertOnPrimary(MyBatisApp.where(mapper));
  }
}
