package dev.omnium.fw.jpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.omnium.fw.Routes;
import dev.omnium.fw.boot.BootContext;
import dev.omnium.sandbox.testkit.PgSandbox;
import dev.omnium.sandbox.testkit.Poll;
import dev.omnium.sandbox.testkit.Where;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.orm.jpa.EntityManagerFactoryBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.orm.jpa.EntityManagerFactoryUtils;
import org.springframework.orm.jpa.EntityManagerHolder;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.SharedEntityManagerCreator;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Spring Boot 3 + Spring Data JPA + Hibernate 6 over {@code jdbc:omnium:} with Boot's HikariCP: repository
 * reads in read-only transactions on the replica, saves on the primary, entities intact, and no replica
 * session carried into a later write by Hibernate's connection handling.
 */
class SpringDataJpaIT {
  static final String APP = "jpa";
  @RegisterExtension
  static final PgSandbox SANDBOX = PgSandbox.builder().replicas(1).build();
  static ConfigurableApplicationContext context;
  static CatalogItemRepository repo;
  static JpaApp.Catalog catalog;

  @BeforeAll
  static void up() throws Exception {
    long t0 = System.nanoTime();
    context = BootContext.start(JpaApp.class, SANDBOX, APP, "heartbeatInterval=200ms",
        // two pooled logical connections: consecutive transactions reuse them, so a pinned
        // replica session would show up in the very next unit of work
        "spring.datasource.hikari.maximum-pool-size=2",
        "spring.jpa.hibernate.ddl-auto=create",
        "spring.jpa.open-in-view=false");
    System.out.printf("jpa: Spring Boot context up in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
    repo = context.getBean(CatalogItemRepository.class);
    catalog = context.getBean(JpaApp.Catalog.class);
    // the schema Hibernate created through the driver reaches the replica like any other DDL
    SANDBOX.awaitCaughtUp();
    assertEquals("1", SANDBOX.queryOne(SANDBOX.replica(),
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'catalog_item'"));
    long seed = catalog.save(item("seed")).id();
    SANDBOX.awaitCaughtUp();
    Poll.until(Duration.ofSeconds(15), "read-only transactions to reach the replica",
        () -> catalog.load(seed).where().inRecovery());
  }

  @AfterAll
  static void down() throws Exception {
    if (context != null) context.close();
  }

  static CatalogItem item(String name) {
    return new CatalogItem(name, new BigDecimal("1234.50"), Instant.now().truncatedTo(ChronoUnit.MICROS),
        CatalogItem.Kind.TOOL, UUID.randomUUID(), new byte[] {0, 1, 2, (byte) 0xff}, new String[] {"a", "b c"});
  }

  void assertOnReplica(Where w) {
    Routes.assertOnReplica(w, SANDBOX, APP);
  }

  void assertOnPrimary(Where w) {
    Routes.assertOnPrimary(w, SANDBOX, APP);
  }

  @Test
  void repositoryReadsInReadOnlyTransactionsRunOnTheReplica() throws Exception {
    long id = catalog.save(item("reads")).id();
    SANDBOX.awaitCaughtUp();
    // CrudRepository methods inherit SimpleJpaRepository's @Transactional(readOnly = true)
    assertOnReplica(repo.findById(id).orElseThrow().servedBy());
    repo.findAll().forEach(i -> assertOnReplica(i.servedBy()));
    // a declared query method annotated @Transactional(readOnly = true)
    repo.findByName("reads").forEach(i -> assertOnReplica(i.servedBy()));
    // a service method marked read-only: every statement of the transaction on one replica session
    JpaApp.Loaded loaded = catalog.load(id);
    assertOnReplica(loaded.where());
    assertOnReplica(loaded.item().servedBy());
    assertEquals(loaded.where().pid(), loaded.item().servedBy().pid(), "one transaction, one replica session");
  }

  /**
   * Documented pitfall: a declared query method without an annotation of its own does not run in a
   * read-only transaction (SimpleJpaRepository's class-level {@code @Transactional(readOnly = true)}
   * covers the CRUD methods it implements, not the interface's query methods), so it reads from the
   * primary. Annotate it, or the repository interface, with {@code @Transactional(readOnly = true)}.
   */
  @Test
  void declaredQueryMethodsNeedTheirOwnReadOnlyAnnotation() throws Exception {
    catalog.save(item("declared"));
    SANDBOX.awaitCaughtUp();
    List<CatalogItem> tools = repo.findByKind(CatalogItem.Kind.TOOL);
    assertFalse(tools.isEmpty());
    tools.forEach(i -> assertOnPrimary(i.servedBy()));
    List<CatalogItem> named = repo.findByName("declared");
    assertEquals(1, named.size());
    assertOnReplica(named.get(0).servedBy());
  }

  @Test
  void savesRunOnThePrimary() throws Exception {
    JpaApp.Saved saved = catalog.save(item("saved"));
    assertOnPrimary(saved.where());
    assertEquals("saved", SANDBOX.queryOne(SANDBOX.primary(), "SELECT name FROM catalog_item WHERE id = ?", saved.id()));
    // a repository save outside any service transaction: SimpleJpaRepository's @Transactional (read-write)
    CatalogItem direct = repo.save(item("direct"));
    assertEquals("direct", SANDBOX.queryOne(SANDBOX.primary(), "SELECT name FROM catalog_item WHERE id = ?", direct.getId()));
  }

  @Test
  void entityRoundTripIsIntactThroughTheReplica() throws Exception {
    CatalogItem original = item("Zoë's ✓ item");
    long id = catalog.save(original).id();
    SANDBOX.awaitCaughtUp();
    JpaApp.Loaded loaded = catalog.load(id);
    assertOnReplica(loaded.item().servedBy());
    CatalogItem back = loaded.item();
    assertEquals(original.getName(), back.getName());
    assertEquals(0, original.getPrice().compareTo(back.getPrice()));
    assertEquals(original.getCreatedAt(), back.getCreatedAt());
    assertEquals(original.getKind(), back.getKind());
    assertEquals(original.getRef(), back.getRef());
    assertArrayEquals(original.getPayload(), back.getPayload());
    assertArrayEquals(original.getTags(), back.getTags());
    assertEquals(0L, back.getVersion());
    // an update increments the version on the primary; the replica then serves the new state
    JpaApp.Saved renamed = catalog.rename(id, "renamed");
    assertOnPrimary(renamed.where());
    SANDBOX.awaitCaughtUp();
    JpaApp.Loaded again = catalog.load(id);
    assertOnReplica(again.item().servedBy());
    assertEquals("renamed", again.item().getName());
    assertEquals(1L, again.item().getVersion());
  }

  /**
   * Spring's default for Hibernate (DELAYED_ACQUISITION_AND_HOLD) with an EntityManager that spans
   * several transactions, as open-session-in-view does: the same pooled logical connection serves a
   * read-only transaction (replica) and then a write (primary); the replica session is not carried over.
   */
  @Test
  void anOpenEntityManagerDoesNotCarryTheReplicaSessionIntoTheNextWrite() throws Exception {
    long id = catalog.save(item("osiv")).id();
    SANDBOX.awaitCaughtUp();
    EntityManagerFactory emf = context.getBean(EntityManagerFactory.class);
    EntityManager em = emf.createEntityManager();
    TransactionSynchronizationManager.bindResource(emf, new EntityManagerHolder(em));
    try {
      JpaApp.Loaded read = catalog.load(id);
      JpaApp.Saved write = catalog.rename(id, "osiv-renamed");
      JpaApp.Loaded readAgain = catalog.load(id);
      assertOnReplica(read.where());
      assertOnPrimary(write.where());
      assertOnReplica(readAgain.where());
      assertEquals(read.connection(), write.connection(), "one held logical connection served all three");
      assertEquals(write.connection(), readAgain.connection());
    } finally {
      TransactionSynchronizationManager.unbindResource(emf);
      EntityManagerFactoryUtils.closeEntityManager(em);
    }
    assertEquals(0, SANDBOX.sessions(SANDBOX.replica(), APP + ":replica", "idle in transaction"),
        "no replica session left inside a transaction");
  }

  /**
   * Hibernate's own default for resource-local transactions, DELAYED_ACQUISITION_AND_RELEASE_AFTER_TRANSACTION:
   * the JDBC connection goes back to the pool at every commit. Two documented facts:
   * (1) Spring's HibernateJpaDialect applies {@code readOnly} to the JDBC connection only when the
   * connection is held for the session (release mode ON_CLOSE), so in this mode
   * {@code @Transactional(readOnly = true)} never reaches the driver and runs on the primary;
   * (2) when the read-only transaction declares read-only on its connection itself, it runs on the
   * replica, and the next write (the connection released and borrowed again) runs on the primary.
   */
  @Test
  void releaseAfterTransactionModeNeverPinsAReplicaSessionIntoALaterWrite() throws Exception {
    long id = catalog.save(item("release-after-tx")).id();
    SANDBOX.awaitCaughtUp();
    LocalContainerEntityManagerFactoryBean factory = context.getBean(EntityManagerFactoryBuilder.class)
        .dataSource(context.getBean(DataSource.class))
        .packages(CatalogItem.class)
        .persistenceUnit("release-after-transaction")
        .properties(Map.of("hibernate.connection.handling_mode", "DELAYED_ACQUISITION_AND_RELEASE_AFTER_TRANSACTION",
            "hibernate.hbm2ddl.auto", "none")) // the schema exists: do not let this second factory re-create it
        .build();
    factory.afterPropertiesSet();
    EntityManagerFactory emf = factory.getObject();
    try {
      JpaTransactionManager tm = new JpaTransactionManager(emf);
      TransactionTemplate readOnly = new TransactionTemplate(tm);
      readOnly.setReadOnly(true);
      TransactionTemplate readWrite = new TransactionTemplate(tm);
      EntityManager shared = SharedEntityManagerCreator.createSharedEntityManager(emf);
      EntityManager em = emf.createEntityManager();
      TransactionSynchronizationManager.bindResource(emf, new EntityManagerHolder(em));
      try {
        // (1) the pitfall: readOnly is not passed to JDBC in this mode
        Where ignored = readOnly.execute(s -> {
          boolean connectionReadOnly = shared.unwrap(Session.class).doReturningWork(c -> c.isReadOnly());
          assertFalse(connectionReadOnly, "Spring left the connection read-write");
          return JpaApp.Catalog.where(shared);
        });
        assertOnPrimary(ignored);

        // (2) declared on the connection: replica; then a write on the primary; then the replica again
        Where read = readOnly.execute(s -> {
          shared.unwrap(Session.class).doWork(c -> c.setReadOnly(true));
          CatalogItem loaded = shared.find(CatalogItem.class, id);
          assertOnReplica(loaded.servedBy());
          return JpaApp.Catalog.where(shared);
        });
        Where write = readWrite.execute(s -> {
          shared.find(CatalogItem.class, id).setName("released");
          shared.flush();
          return JpaApp.Catalog.where(shared);
        });
        Where readAgain = readOnly.execute(s -> {
          shared.unwrap(Session.class).doWork(c -> c.setReadOnly(true));
          return JpaApp.Catalog.where(shared);
        });
        assertOnReplica(read);
        assertOnPrimary(write);
        assertOnReplica(readAgain);
      } finally {
        TransactionSynchronizationManager.unbindResource(emf);
        EntityManagerFactoryUtils.closeEntityManager(em);
      }
      assertEquals("released", SANDBOX.queryOne(SANDBOX.primary(), "SELECT name FROM catalog_item WHERE id = ?", id));
      assertEquals(0, SANDBOX.sessions(SANDBOX.replica(), APP + ":replica", "idle in transaction"));
    } finally {
      factory.destroy();
    }
  }
}
