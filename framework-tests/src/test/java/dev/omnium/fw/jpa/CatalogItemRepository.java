package dev.omnium.fw.jpa;

import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.transaction.annotation.Transactional;

/** A plain Spring Data JPA repository. */
public interface CatalogItemRepository extends JpaRepository<CatalogItem, Long> {
  /** A declared query method, without a transaction annotation of its own. */
  List<CatalogItem> findByKind(CatalogItem.Kind kind);

  /** A declared query method that asks for a read-only transaction, as Spring Data's docs suggest. */
  @Transactional(readOnly = true)
  List<CatalogItem> findByName(String name);
}
