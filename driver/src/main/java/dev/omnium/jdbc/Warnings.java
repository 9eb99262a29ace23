package dev.omnium.jdbc;

import java.sql.SQLWarning;

/** Warnings of several sessions as one chain of copies, so no call ever links them in a cycle. */
final class Warnings {
  private Warnings() { }

  static SQLWarning chain(SQLWarning first, SQLWarning second) {
    if (first == null && second == null) return null;
    if (second == null) return first; // the session's own chain, as pgjdbc returns it
    if (first == null) return second;
    SQLWarning head = null;
    SQLWarning tail = null;
    for (SQLWarning chain : new SQLWarning[] {first, second}) {
      for (SQLWarning w = chain; w != null; w = w.getNextWarning()) {
        SQLWarning copy = new SQLWarning(w.getMessage(), w.getSQLState(), w.getErrorCode(), w);
        if (head == null) {
          head = copy;
        } else {
          tail.setNextWarning(copy);
        }
        tail = copy;
      }
    }
    return head;
  }
}
