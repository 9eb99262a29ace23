package dev.omnium.conformance;

import static dev.omnium.conformance.OnConnection.opened;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;

/** DatabaseMetaData as ORMs and migration tools read it (issue 12 defect 6). */
final class MetadataScenarios {
  private MetadataScenarios() { }

  static void table(Run r) throws Exception {
    r.setup("DROP TABLE IF EXISTS md_items CASCADE",
        "CREATE TABLE md_items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2))",
        "CREATE INDEX md_items_name ON md_items (name)");
  }

  static String rows(ResultSet rs, String... columns) throws Exception {
    try (rs) {
      StringBuilder s = new StringBuilder();
      while (rs.next()) {
        for (String col : columns) {
          s.append(rs.getString(col)).append('|');
        }
        s.append(';');
      }
      return s.toString();
    }
  }

  static Scenarios.Group group() {
    return new Scenarios.Group("metadata")
        .add("product", opened((r, c) -> {
          DatabaseMetaData md = c.getMetaData();
          r.call("product", md::getDatabaseProductName);
          r.call("major", md::getDatabaseMajorVersion);
          r.call("jdbc-major", md::getJDBCMajorVersion);
          r.call("user", md::getUserName);
          r.call("read-only", md::isReadOnly);
          r.call("identifier-quote", md::getIdentifierQuoteString);
        }))
        .add("capabilities", r -> {
          DatabaseMetaData md = r.open().getMetaData();
          r.call("transactions", md::supportsTransactions);
          r.call("savepoints", md::supportsSavepoints);
          r.call("default-isolation", md::getDefaultTransactionIsolation);
          r.call("batch", md::supportsBatchUpdates);
          r.call("generated-keys", md::supportsGetGeneratedKeys);
          r.call("multiple-results", md::supportsMultipleResultSets);
          r.call("hold", () -> md.supportsResultSetHoldability(ResultSet.HOLD_CURSORS_OVER_COMMIT));
          r.call("scroll", () -> md.supportsResultSetType(ResultSet.TYPE_SCROLL_INSENSITIVE));
        })
        .add("tables", r -> {
          table(r);
          DatabaseMetaData md = r.open().getMetaData();
          r.call("tables", () -> rows(md.getTables(null, "public", "md_items", null),
              "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE"));
        })
        .add("columns", r -> {
          table(r);
          DatabaseMetaData md = r.open().getMetaData();
          r.call("columns", () -> rows(md.getColumns(null, "public", "md_items", "%"),
              "COLUMN_NAME", "TYPE_NAME", "COLUMN_SIZE", "IS_NULLABLE"));
        })
        .add("keys-and-indexes", r -> {
          table(r);
          DatabaseMetaData md = r.open().getMetaData();
          r.call("pk", () -> rows(md.getPrimaryKeys(null, "public", "md_items"), "COLUMN_NAME"));
          r.call("index", () -> rows(md.getIndexInfo(null, "public", "md_items", false, false),
              "INDEX_NAME", "COLUMN_NAME", "NON_UNIQUE"));
        })
        .add("metadata-connection-identity", opened((r, c) -> {
          DatabaseMetaData md = c.getMetaData();
          r.call("connection", () -> md.getConnection() == c);
          r.call("rs-statement", () -> {
            try (ResultSet rs = md.getSchemas()) {
              return rs.getStatement() == null ? "null" : rs.getStatement().getConnection() == c;
            }
          });
        }))
        .add("metadata-on-read-only", r -> {
          table(r);
          Connection c = r.open();
          c.setReadOnly(true);
          DatabaseMetaData md = c.getMetaData();
          r.call("tables", () -> rows(md.getTables(null, "public", "md_items", null),
              "TABLE_NAME"));
          c.setReadOnly(false);
          r.call("after-switch", () -> rows(md.getPrimaryKeys(null, "public", "md_items"),
              "COLUMN_NAME"));
        })
        .add("metadata-inside-transaction", r -> {
          table(r);
          Connection c = r.openTransaction();
          r.u("create", c, "CREATE TABLE md_tx_only (x int)");
          DatabaseMetaData md = c.getMetaData();
          r.call("sees-uncommitted", () -> rows(md.getTables(null, "public", "md_tx_only", null),
              "TABLE_NAME"));
          c.rollback();
          r.call("after-rollback", () -> rows(md.getTables(null, "public", "md_tx_only", null),
              "TABLE_NAME"));
        })
        .add("metadata-after-close", opened((r, c) -> {
          DatabaseMetaData md = c.getMetaData();
          c.close();
          r.call("tables", () -> rows(md.getTables(null, "public", "%", null), "TABLE_NAME"));
        }))
        .add("url-and-driver", r -> {
          DatabaseMetaData md = r.open().getMetaData();
          r.call("url-prefix", () -> md.getURL().startsWith("jdbc:"));
          r.call("url-has-password", () -> md.getURL().toLowerCase().contains("password="));
          r.call("driver-major", md::getDriverMajorVersion);
        })
        .add("type-info", r -> {
          DatabaseMetaData md = r.open().getMetaData();
          r.call("has-int4", () -> {
            try (ResultSet rs = md.getTypeInfo()) {
              while (rs.next()) {
                if ("int4".equals(rs.getString("TYPE_NAME"))) {
                  return rs.getInt("DATA_TYPE");
                }
              }
              return "none";
            }
          });
        });
  }
}
