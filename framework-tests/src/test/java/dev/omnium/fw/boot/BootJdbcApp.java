package dev.omnium.fw.boot;

import dev.omnium.sandbox.testkit.Where;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.mybatis.spring.boot.autoconfigure.MybatisAutoConfiguration;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.data.jpa.JpaRepositoriesAutoConfiguration;
import org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * A plain Spring Boot 3 application: Boot's HikariCP pool, DataSourceTransactionManager, JdbcTemplate,
 * jOOQ and Flyway, all auto-configured from {@code spring.datasource.*}. Nothing omnium-specific but the URL
 * (and the driver class name, which Boot cannot infer from a {@code jdbc:omnium:} URL).
 */
@SpringBootConfiguration
@EnableAutoConfiguration(exclude = {HibernateJpaAutoConfiguration.class, JpaRepositoriesAutoConfiguration.class,
    MybatisAutoConfiguration.class})
@Import({BootJdbcApp.Reads.class, BootJdbcApp.Writes.class})
public class BootJdbcApp {

  static Where where(JdbcTemplate jdbc) {
    return jdbc.queryForObject(Where.SQL, (rs, n) -> Where.from(rs));
  }

  /** Read-only services: {@code @Transactional(readOnly = true)} is the whole routing contract. */
  public static class Reads {
    private final JdbcTemplate jdbc;
    private final Writes writes;
    private final DSLContext dsl;

    public Reads(JdbcTemplate jdbc, Writes writes, DSLContext dsl) {
      this.jdbc = jdbc;
      this.writes = writes;
      this.dsl = dsl;
    }

    @Transactional(readOnly = true)
    public Where where() {
      return BootJdbcApp.where(jdbc);
    }

    @Transactional(readOnly = true)
    public List<Where> twoStatements() {
      Where first = BootJdbcApp.where(jdbc);
      Integer items = jdbc.queryForObject("SELECT count(*) FROM items", Integer.class);
      if (items == null || items < 3) throw new IllegalStateException("the seeded rows are missing: " + items);
      return List.of(first, BootJdbcApp.where(jdbc));
    }

    /** Read-only method calling a read-write REQUIRED method: the inner one joins this read-only transaction. */
    @Transactional(readOnly = true)
    public void thenRequiredWrite(int id, List<Where> seen) {
      seen.add(BootJdbcApp.where(jdbc));
      writes.insert(id, seen);
    }

    /** Read-only method calling a REQUIRES_NEW write: Spring suspends this transaction and starts a new one. */
    @Transactional(readOnly = true)
    public void thenRequiresNewWrite(int id, List<Where> seen) {
      seen.add(BootJdbcApp.where(jdbc));
      writes.insertInNewTransaction(id, seen);
      seen.add(BootJdbcApp.where(jdbc));
    }

    /** Joined from a read-write transaction: the readOnly flag of a participating method is not applied. */
    @Transactional(readOnly = true)
    public int countJoined(int id, List<Where> seen) {
      seen.add(BootJdbcApp.where(jdbc));
      return jdbc.queryForObject("SELECT count(*) FROM items WHERE id = ?", Integer.class, id);
    }

    /** jOOQ as Boot configures it (SpringTransactionProvider): it follows the Spring transaction. */
    @Transactional(readOnly = true)
    public Where jooqWhere() {
      return dsl.resultQuery(Where.SQL).fetchOne(r -> new Where(r.get("in_recovery", Boolean.class),
          r.get("port", Integer.class), r.get("app", String.class), r.get("pid", Integer.class),
          r.get("read_only_default", Boolean.class)));
    }

    @Transactional(readOnly = true)
    public int jooqCount() {
      return dsl.fetchCount(DSL.table("items"));
    }
  }

  /** Read-write services: plain {@code @Transactional}. */
  public static class Writes {
    private final JdbcTemplate jdbc;
    private Reads reads;

    public Writes(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @org.springframework.beans.factory.annotation.Autowired
    void setReads(@org.springframework.context.annotation.Lazy Reads reads) {
      this.reads = reads;
    }

    @Transactional
    public Where insert(int id, List<Where> seen) {
      Where w = BootJdbcApp.where(jdbc);
      seen.add(w);
      jdbc.update("INSERT INTO items (id, name) VALUES (?, ?)", id, "item" + id);
      return w;
    }

    @Transactional(propagation = Propagation.REQUIRES_NEW)
    public void insertInNewTransaction(int id, List<Where> seen) {
      insert(id, seen); // self-call: runs inside this REQUIRES_NEW transaction
    }

    @Transactional
    public int insertThenReadOnlyJoin(int id, List<Where> seen) {
      insert(id, seen);
      return reads.countJoined(id, seen);
    }
  }
}
