package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.SQLException;

/** Where a run's application connections come from: one side of a comparison. */
public interface Source {
  /** @return a new application connection (from a pool, a data source or DriverManager) */
  Connection open() throws SQLException;

  /** @return the application_name this side's sessions carry on the servers */
  String app();
}
