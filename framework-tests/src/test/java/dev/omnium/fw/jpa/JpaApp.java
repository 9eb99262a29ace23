package dev.omnium.fw.jpa;

import dev.omnium.jdbc.OmniumConnection;
import dev.omnium.sandbox.testkit.Where;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.List;
import org.hibernate.Session;
import org.mybatis.spring.boot.autoconfigure.MybatisAutoConfiguration;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.annotation.Transactional;

/** A Spring Boot 3 + Spring Data JPA (Hibernate 6) application, everything auto-configured. */
@SpringBootConfiguration
@EnableAutoConfiguration(exclude = {FlywayAutoConfiguration.class, MybatisAutoConfiguration.class})
@Import(JpaApp.Catalog.class)
public class JpaApp {

  /** What the application's services look like: read-only methods say so. */
  public static class Catalog {
    private final CatalogItemRepository repo;
    @PersistenceContext
    private EntityManager em;

    public Catalog(CatalogItemRepository repo) {
      this.repo = repo;
    }

    /** Saves, flushes, and reports where the transaction's session is, from inside it. */
    @Transactional
    public Saved save(CatalogItem item) {
      CatalogItem saved = repo.save(item);
      em.flush();
      return new Saved(saved.getId(), where(em), logicalConnection(em));
    }

    @Transactional(readOnly = true)
    public Loaded load(long id) {
      CatalogItem item = repo.findById(id).orElseThrow();
      return new Loaded(item, where(em), logicalConnection(em));
    }

    @Transactional
    public Saved rename(long id, String name) {
      CatalogItem item = repo.findById(id).orElseThrow();
      item.setName(name);
      em.flush();
      return new Saved(id, where(em), logicalConnection(em));
    }

    static Where where(EntityManager em) {
      return Where.of((Object[]) em.createNativeQuery(Where.SQL).getSingleResult());
    }

    /** Identity of the omnium logical connection behind the session (HikariCP's proxy unwrapped). */
    static int logicalConnection(EntityManager em) {
      return em.unwrap(Session.class).doReturningWork(c -> System.identityHashCode(c.unwrap(OmniumConnection.class)));
    }

    @Transactional(readOnly = true)
    public List<CatalogItem> allInReadOnlyTransaction() {
      return repo.findAll();
    }
  }

  public record Saved(long id, Where where, int connection) { }

  public record Loaded(CatalogItem item, Where where, int connection) { }
}
