package dev.omnium.jdbc;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;

/**
 * An array made by {@link OmniumConnection#createArrayOf}: it keeps the type name, the elements
 * and pgjdbc's literal, and does any server work on the logical connection's current session,
 * so it stays valid wherever it is used, even after the session it was made on went back to a
 * pool. pgjdbc binds any {@link Array} as its literal ({@link #toString()}) and base type name.
 */
final class LogicalArray implements Array {
  private final OmniumConnection connection;
  private final String typeName;
  private final Object[] elements;
  private final String literal;
  private final int baseType;
  private final String baseTypeName;
  private boolean freed;

  LogicalArray(OmniumConnection connection, String typeName, Object[] elements)
      throws SQLException {
    this.connection = connection;
    this.typeName = typeName;
    this.elements = elements == null ? null : elements.clone();
    Array made = physical();
    this.literal = made.toString();
    this.baseType = made.getBaseType();
    this.baseTypeName = made.getBaseTypeName();
    made.free();
  }

  private Array physical() throws SQLException {
    if (freed) throw new SQLException("omnium: this array has been freed", "HY000");
    return connection.currentOrPrimary().createArrayOf(typeName, elements);
  }

  @Override public String getBaseTypeName() { return baseTypeName; }
  @Override public int getBaseType() { return baseType; }
  @Override public Object getArray() throws SQLException { return physical().getArray(); }

  @Override
  public Object getArray(Map<String, Class<?>> map) throws SQLException {
    return physical().getArray(map);
  }

  @Override
  public Object getArray(long index, int count) throws SQLException {
    return physical().getArray(index, count);
  }

  @Override
  public Object getArray(long index, int count, Map<String, Class<?>> map) throws SQLException {
    return physical().getArray(index, count, map);
  }

  @Override
  public ResultSet getResultSet() throws SQLException {
    return physical().getResultSet();
  }

  @Override
  public ResultSet getResultSet(Map<String, Class<?>> map) throws SQLException {
    return physical().getResultSet(map);
  }

  @Override
  public ResultSet getResultSet(long index, int count) throws SQLException {
    return physical().getResultSet(index, count);
  }

  @Override
  public ResultSet getResultSet(long index, int count, Map<String, Class<?>> map)
      throws SQLException {
    return physical().getResultSet(index, count, map);
  }

  @Override
  public void free() {
    freed = true;
  }

  /** pgjdbc's array literal, which is what pgjdbc sends when this array is a parameter. */
  @Override
  public String toString() {
    return literal;
  }
}
