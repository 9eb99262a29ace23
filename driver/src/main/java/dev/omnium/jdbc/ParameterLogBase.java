package dev.omnium.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.sql.CallableStatement;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Calendar;
import java.util.Date;
import java.util.Objects;
import java.util.TimeZone;

/**
 * The parameters of a logical prepared or callable statement, recorded so that they can be
 * applied to whichever physical statement runs it ({@link #applyTo}), again after a rebind, and
 * snapshotted for a batch ({@link #copy}). This class holds the whole algorithm; the generated
 * subclass {@link ParameterLog} adds one recording method per JDBC setter (same name and
 * parameters, storing its arguments in an {@link Entry}) and the replay of each kind.
 *
 * <p>Recording never throws: the physical driver validates the call (index range, types,
 * feature support) when it is applied, so errors surface at execution. A later call for the same
 * index (or name) replaces the earlier one in place; replay calls the very overload that was
 * recorded with the recorded arguments.
 *
 * <p>Order of replay: indexed parameters in ascending index order, the out-parameter registration
 * of an index before its value; then named parameters and indexes outside
 * {@code 1..}{@value #MAX_DENSE_INDEX} in the order they were first set.
 *
 * <p>{@code byte[]}, {@code java.util.Date} (and the {@code java.sql} date types),
 * {@code Calendar} and arrays given to {@code setObject} are copied when recorded, as pgjdbc
 * converts them when they are set, so an application that reuses a buffer between
 * {@code addBatch()} calls sends what it set. Streams and readers arrive as {@link StreamValue}s
 * (read once, where pgjdbc reads them), which give each apply a fresh copy; an apply that only
 * describes ({@link #describeTo}) leaves a stream pgjdbc reads at execute unread.
 *
 * <p>A snapshot ({@link #copyLog()}, once per {@code addBatch()} row) copies the tables, not the
 * entries: both logs share them until either records a new value, which then takes a fresh entry
 * instead of changing the shared one (an entry belongs to the log whose {@link #generation} it
 * carries). So a batch row costs its tables, not one object per parameter.
 *
 * <p>A logical connection keeps the log of the last prepared statement closed on it and gives it,
 * {@linkplain #recycle() emptied}, to the next one: a connection that prepares one statement per
 * transaction allocates no log, table or entry per statement. A closed statement drops its
 * reference first, and every setter checks that its statement is open before it records.
 *
 * <p>Not thread-safe, like the statement that owns it. {@link #toString()} never shows values.
 */
abstract class ParameterLogBase {
  /** Highest index kept in the direct tables; PostgreSQL accepts at most 65535 parameters. */
  static final int MAX_DENSE_INDEX = 65535;

  /** Kind of an entry that holds nothing (a cleared value); the generated kinds start at 1. */
  static final int NONE = 0;

  /** Largest table (in slots) a log keeps when it is recycled; larger ones are left to GC. */
  static final int MAX_RECYCLED_TABLE = 128;

  private static final Entry[] NO_ENTRIES = new Entry[0];

  /** Values by index (slot 0 unused); entries are reused, {@code kind == NONE} when cleared. */
  private Entry[] values = NO_ENTRIES;
  /** Out-parameter registrations by index. */
  private Entry[] outs = NO_ENTRIES;
  /** Named parameters and out-of-range indexes, in the order first set. */
  private Entry[] others = NO_ENTRIES;
  private int otherCount;
  private int valueCount;
  private int outCount;
  /** No set value or registration above these indexes. */
  private int valueHigh;
  private int outHigh;
  /** Entries of another generation are shared with a snapshot: never changed, replaced. */
  private int generation;
  /**
   * Which execute (and batch row) the next {@link #applyTo} is for: a stream pgjdbc reads at
   * execute is read again for another, replayed for the same one (a retry); negative while
   * {@link #describeTo} applies (nothing executes, nothing is read).
   */
  long execute;
  /**
   * The default time zone of this execute's date and time setters, read at the first of them
   * (see {@code LogicalPreparedStatement#calendarAtSetter}); null after each execute.
   */
  TimeZone zone;
  /**
   * The parameter count of {@link #countedFor}, the SQL of the statement that last checked an
   * index here. Kept when the log is recycled: the next statement of a connection is most often
   * the same SQL again, and then costs no look-up (kept here, not in the statement, so a
   * statement object stays small).
   */
  int parameterCount;
  String countedFor;

  /** Calls on {@code ps} the setter or registration that {@code e} recorded. */
  abstract void apply(PreparedStatement ps, Entry e) throws SQLException;

  /** An empty log of the same kind, for {@link #copy()}. */
  abstract ParameterLogBase newLog();

  /** True when nothing is recorded: no value and no out-parameter registration. */
  final boolean isEmpty() {
    return valueCount == 0 && outCount == 0 && otherCount == 0;
  }

  /**
   * Forgets every parameter value, as {@link PreparedStatement#clearParameters()}.
   * Out-parameter registrations are kept: JDBC clears values, not registrations.
   */
  final void clearParameters() {
    emptyTable(values, valueHigh);
    valueCount = 0;
    valueHigh = 0;
    int kept = 0;
    for (int i = 0; i < otherCount; i++) {
      if (others[i].out) others[kept++] = others[i];
    }
    Arrays.fill(others, kept, otherCount, null);
    otherCount = kept;
  }

  /**
   * Empties this log for the next statement of its connection, as a new one: no value, no
   * registration, no named parameter. Its tables and its own entries are kept (emptied, so no
   * value outlives its statement); entries it shares with a snapshot are dropped from its tables,
   * so a snapshot still being applied never sees a later statement's values.
   *
   * @return false when its tables are larger than {@value #MAX_RECYCLED_TABLE} slots: such a
   *     log is not worth keeping
   */
  final boolean recycle() {
    if (values.length > MAX_RECYCLED_TABLE || outs.length > MAX_RECYCLED_TABLE
        || others.length > MAX_RECYCLED_TABLE) {
      return false;
    }
    emptyTable(values, values.length - 1);
    emptyTable(outs, outs.length - 1);
    Arrays.fill(others, 0, otherCount, null);
    otherCount = 0;
    valueCount = 0;
    outCount = 0;
    valueHigh = 0;
    outHigh = 0;
    zone = null;
    return true;
  }

  /** Empties {@code table}'s entries up to {@code high}; drops those shared with a snapshot. */
  private void emptyTable(Entry[] table, int high) {
    for (int i = 1; i <= high; i++) {
      Entry e = table[i];
      if (e == null) continue;
      if (e.generation == generation) {
        e.clear();
      } else {
        table[i] = null; // shared with a snapshot
      }
    }
  }

  /** An independent snapshot (for {@code addBatch()}): later calls on either stay apart. */
  final ParameterLogBase copyLog() {
    ParameterLogBase c = newLog();
    c.values = copyTable(values, valueHigh);
    c.outs = copyTable(outs, outHigh);
    c.valueCount = valueCount;
    c.outCount = outCount;
    c.valueHigh = valueHigh;
    c.outHigh = outHigh;
    c.others = otherCount == 0 ? NO_ENTRIES : Arrays.copyOf(others, otherCount);
    c.otherCount = otherCount;
    // from now on every current entry is shared: both logs replace it rather than change it
    generation++;
    c.generation = generation;
    return c;
  }

  /**
   * False when a recorded value is an {@link InputStream} or a {@link Reader} of its own (not a
   * {@link StreamValue}): applying it consumes it, so the statement cannot be applied a second
   * time (for example to retry it on another connection) with the same data.
   */
  final boolean isReplayable() {
    for (int i = 1; i <= valueHigh; i++) {
      Entry e = values[i];
      if (e != null && e.kind != NONE && e.holdsStream()) return false;
    }
    for (int i = 0; i < otherCount; i++) {
      if (others[i].holdsStream()) return false;
    }
    return true;
  }

  /**
   * Calls on {@code ps} the recorded setters and registrations, in the order described above.
   * Named setters and {@code registerOutParameter} need a {@link CallableStatement}.
   */
  final void applyTo(PreparedStatement ps) throws SQLException {
    int high = Math.max(valueHigh, outHigh);
    for (int i = 1; i <= high; i++) {
      if (i <= outHigh) {
        Entry e = outs[i];
        if (e != null && e.kind != NONE) apply(ps, e);
      }
      if (i <= valueHigh) {
        Entry e = values[i];
        if (e != null && e.kind != NONE) apply(ps, e);
      }
    }
    for (int i = 0; i < otherCount; i++) {
      apply(ps, others[i]);
    }
  }

  /**
   * {@link #applyTo} for a statement that only describes ({@code getMetaData()},
   * {@code getParameterMetaData()}, {@code toString()}): a stream pgjdbc reads at execute is
   * given unread, as pgjdbc leaves it then.
   */
  final void describeTo(PreparedStatement ps) throws SQLException {
    long e = execute;
    execute = -1;
    try {
      applyTo(ps);
    } finally {
      execute = e;
    }
  }

  /** A recorded stream as the physical statement gets it (see {@link StreamValue}). */
  final InputStream stream(Object recorded) {
    return StreamValue.stream(recorded, execute);
  }

  /** A recorded reader as the physical statement gets it (see {@link StreamValue}). */
  final Reader reader(Object recorded) {
    return StreamValue.reader(recorded);
  }

  /** Counts only: values may be secrets. */
  @Override
  public final String toString() {
    int otherValues = 0;
    for (int i = 0; i < otherCount; i++) {
      if (!others[i].out) otherValues++;
    }
    return "ParameterLog[values=" + (valueCount + otherValues)
        + ", outParameters=" + (outCount + otherCount - otherValues) + "]";
  }

  /** The entry for {@code index}, emptied for a new value of {@code kind}. */
  final Entry indexed(int index, boolean out, int kind) {
    Entry e = index < 1 || index > MAX_DENSE_INDEX
        ? other(index, null, false, out) : dense(index, out);
    e.kind = kind;
    return e;
  }

  /** The entry for the named parameter {@code name}, emptied for a new value of {@code kind}. */
  final Entry named(String name, boolean out, int kind) {
    Entry e = other(0, name, true, out);
    e.kind = kind;
    return e;
  }

  private Entry dense(int index, boolean out) {
    Entry[] table = out ? outs : values;
    if (index >= table.length) {
      int length = Math.min(MAX_DENSE_INDEX + 1, Math.max(index + 1, table.length * 2));
      table = Arrays.copyOf(table, length);
      if (out) {
        outs = table;
      } else {
        values = table;
      }
    }
    Entry e = table[index];
    if (e != null && e.generation != generation) {
      // shared with a snapshot: take a fresh entry, the value it replaces stays the snapshot's
      Entry fresh = new Entry();
      fresh.kind = e.kind;
      e = fresh;
      e.index = index;
      e.out = out;
      e.generation = generation;
      table[index] = e;
    } else if (e == null) {
      e = new Entry();
      e.index = index;
      e.out = out;
      e.generation = generation;
      table[index] = e;
    }
    if (e.kind == NONE) {
      if (out) {
        outCount++;
      } else {
        valueCount++;
      }
    } else {
      e.clear();
    }
    if (out) {
      outHigh = Math.max(outHigh, index);
    } else {
      valueHigh = Math.max(valueHigh, index);
    }
    return e;
  }

  private Entry other(int index, String name, boolean named, boolean out) {
    for (int i = 0; i < otherCount; i++) {
      Entry e = others[i];
      if (e.named == named && e.out == out && e.index == index && Objects.equals(e.name, name)) {
        if (e.generation == generation) {
          e.clear();
          return e;
        }
        Entry fresh = new Entry(); // shared with a snapshot
        fresh.index = index;
        fresh.name = name;
        fresh.named = named;
        fresh.out = out;
        fresh.generation = generation;
        others[i] = fresh;
        return fresh;
      }
    }
    Entry e = new Entry();
    e.index = index;
    e.name = name;
    e.named = named;
    e.out = out;
    e.generation = generation;
    if (otherCount == others.length) {
      others = Arrays.copyOf(others, Math.max(4, otherCount * 2));
    }
    others[otherCount++] = e;
    return e;
  }

  private static Entry[] copyTable(Entry[] table, int high) {
    if (high == 0) return NO_ENTRIES;
    Entry[] c = new Entry[high + 1];
    for (int i = 1; i <= high; i++) {
      Entry e = table[i];
      if (e != null && e.kind != NONE) c[i] = e; // shared: see generation
    }
    return c;
  }

  /** The statement as a {@link CallableStatement}, for named setters and out parameters. */
  static CallableStatement callable(PreparedStatement ps) throws SQLException {
    if (ps instanceof CallableStatement) return (CallableStatement) ps;
    throw new SQLException("named parameters and registerOutParameter need a"
        + " CallableStatement, not " + ps.getClass().getName(), "HY000");
  }

  /** A mutable value as the driver would have seen it at the time it was set. */
  static Object snapshot(Object x) {
    if (x instanceof byte[]) {
      return ((byte[]) x).clone();
    } else if (x instanceof Date) {
      return ((Date) x).clone();
    } else if (x instanceof Calendar) {
      return ((Calendar) x).clone();
    } else if (x instanceof Object[]) {
      return ((Object[]) x).clone();
    } else if (x instanceof int[]) {
      return ((int[]) x).clone();
    } else if (x instanceof long[]) {
      return ((long[]) x).clone();
    } else if (x instanceof short[]) {
      return ((short[]) x).clone();
    } else if (x instanceof double[]) {
      return ((double[]) x).clone();
    } else if (x instanceof float[]) {
      return ((float[]) x).clone();
    } else if (x instanceof boolean[]) {
      return ((boolean[]) x).clone();
    } else if (x instanceof char[]) {
      return ((char[]) x).clone();
    }
    return x;
  }

  /**
   * One recorded call: its kind, its index or name, and its arguments after the first, in two
   * reference and two primitive slots (the generator checks that every JDBC setter fits;
   * {@code boolean}, {@code float} and {@code double} are stored as their bits).
   */
  static final class Entry {
    int kind;
    int generation;
    int index;
    String name;
    boolean named;
    boolean out;
    Object o1;
    Object o2;
    long n1;
    long n2;

    void clear() {
      kind = NONE;
      o1 = null;
      o2 = null;
      n1 = 0;
      n2 = 0;
    }

    boolean holdsStream() {
      return !StreamValue.replayable(o1) || !StreamValue.replayable(o2);
    }
  }
}
