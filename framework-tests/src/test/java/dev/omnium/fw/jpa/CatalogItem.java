package dev.omnium.fw.jpa;

import dev.omnium.sandbox.testkit.Where;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.UUID;
import org.hibernate.annotations.Formula;

/**
 * An ordinary entity, plus five read-only {@link Formula} columns that make every SELECT Hibernate
 * issues for it report the server, route and session that answered it.
 */
@Entity
@Table(name = "catalog_item")
public class CatalogItem {
  public enum Kind { BOOK, TOOL, FOOD }

  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  @Column(nullable = false)
  private String name;

  @Column(precision = 12, scale = 2)
  private BigDecimal price;

  private Instant createdAt;

  @Enumerated(EnumType.STRING)
  private Kind kind;

  private UUID ref;

  private byte[] payload;

  private String[] tags;

  @Version
  private long version;

  @Formula("pg_is_in_recovery()")
  private Boolean servedInRecovery;

  @Formula("inet_server_port()")
  private Integer servedByPort;

  @Formula("current_setting('application_name')")
  private String servedAs;

  @Formula("pg_backend_pid()")
  private Integer servedByPid;

  @Formula("current_setting('default_transaction_read_only') = 'on'")
  private Boolean servedReadOnlyDefault;

  protected CatalogItem() { }

  public CatalogItem(String name, BigDecimal price, Instant createdAt, Kind kind, UUID ref, byte[] payload,
                     String[] tags) {
    this.name = name;
    this.price = price;
    this.createdAt = createdAt;
    this.kind = kind;
    this.ref = ref;
    this.payload = payload;
    this.tags = tags;
  }

  /** Where the SELECT that loaded this entity ran (null for an entity that was only persisted). */
  public Where servedBy() {
    return servedInRecovery == null ? null
        : new Where(servedInRecovery, servedByPort, servedAs, servedByPid, servedReadOnlyDefault);
  }

  public Long getId() { return id; }
  public String getName() { return name; }
  public void setName(String name) { this.name = name; }
  public BigDecimal getPrice() { return price; }
  public Instant getCreatedAt() { return createdAt; }
  public Kind getKind() { return kind; }
  public UUID getRef() { return ref; }
  public byte[] getPayload() { return payload; }
  public String[] getTags() { return tags; }
  public long getVersion() { return version; }
}
