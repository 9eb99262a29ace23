package dev.omnium.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.omnium.ops.MigrationStatement.Kind;
import org.junit.jupiter.api.Test;

class MigrationStatementTest {

  @Test
  void indexes() {
    assertKind(Kind.CREATE_INDEX, "items", "CREATE INDEX items_name ON items (name)");
    assertKind(Kind.CREATE_INDEX, "public.items", "create unique index if not exists i on only"
        + " public.items using btree (lower(name))");
    assertKind(Kind.CREATE_INDEX, "\"Items\"", "CREATE INDEX ON \"Items\" (a)");
    assertKind(Kind.CREATE_INDEX_CONCURRENTLY, "items",
        "/* big */ CREATE INDEX CONCURRENTLY items_name ON items (name)");
    assertKind(Kind.CONCURRENTLY, null, "DROP INDEX CONCURRENTLY items_name");
  }

  @Test
  void typeChanges() {
    assertKind(Kind.ALTER_COLUMN_TYPE, "items", "ALTER TABLE items ALTER COLUMN id TYPE bigint");
    assertKind(Kind.ALTER_COLUMN_TYPE, "s.items", "alter table if exists only s.items add column"
        + " x int, alter id set data type bigint using id::bigint");
    assertKind(Kind.OTHER, "items", "ALTER TABLE items ALTER COLUMN id SET DEFAULT 0");
    assertKind(Kind.OTHER, "items", "ALTER TABLE items ADD COLUMN type text");
  }

  @Test
  void literalsAndCommentsDoNotCount() {
    assertKind(Kind.OTHER, null, "INSERT INTO t VALUES ('CREATE INDEX x ON items (a)')");
    assertKind(Kind.OTHER, null, "-- CREATE INDEX CONCURRENTLY\nSELECT 1");
    assertKind(Kind.OTHER, null, "DO $body$ BEGIN EXECUTE 'CREATE INDEX CONCURRENTLY a ON b (c)';"
        + " END $body$");
  }

  private static void assertKind(Kind kind, String table, String sql) {
    MigrationStatement s = MigrationStatement.of(sql);
    assertEquals(kind, s.kind, sql);
    if (table == null) {
      assertNull(kind == Kind.OTHER || kind == Kind.CONCURRENTLY ? null : s.table);
    } else {
      assertEquals(table, s.table, sql);
    }
  }
}
