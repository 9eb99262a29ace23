package dev.omnium.jdbc;

import static dev.omnium.jdbc.SqlText.is;
import static dev.omnium.jdbc.SqlText.isWordStart;
import static dev.omnium.jdbc.SqlText.skipSpace;
import static dev.omnium.jdbc.SqlText.statementEnd;
import static dev.omnium.jdbc.SqlText.tokenEnd;
import static dev.omnium.jdbc.SqlText.wordAt;

/**
 * What a SQL string may leave on the session it runs on, read from its text once per string
 * (cached by the callers) and without allocation. Four answers, ordered, the strongest of a
 * multi-statement string's statements wins:
 *
 * <ul>
 *   <li>{@link #NONE}: nothing that outlives its transaction: queries and DML calling only
 *       known built-in functions, DDL, transaction control, {@code SET LOCAL}, {@code SHOW}.
 *   <li>{@link #SETTING}: {@code SET}, {@code RESET}, {@code SELECT set_config('name', …)} alone
 *       in its statement, {@code DISCARD ALL}: a session setting the logical connection records
 *       ({@link SqlSetting}) and a reset undoes with certainty ({@link SessionReset}).
 *   <li>{@link #UNSURE}: may have set something the driver cannot see: a call of a function it
 *       does not know ({@code SELECT my_function()}, {@code CALL}, {@code DO}, a function in
 *       another schema), a statement it does not recognise, a literal it cannot delimit with
 *       certainty. A pooled session that ran one is reset and checked once before it is lent
 *       again ({@link SessionReset#CHECK}).
 *   <li>{@link #STATEFUL}: leaves state no reset undoes with certainty: {@code PREPARE},
 *       {@code DECLARE … WITH HOLD}, temporary objects, session advisory locks, {@code LISTEN},
 *       {@code LOAD}, {@code setseed}. A pooled session that ran one is closed, never lent again.
 * </ul>
 *
 * <p>Not seen, and documented as such: functions called by triggers, views, rules, column
 * defaults or operators, which a statement's text does not name.
 */
final class SessionEffect {
  static final int NONE = 0;
  static final int SETTING = 1;
  static final int UNSURE = 2;
  static final int STATEFUL = 3;

  /**
   * Words followed by a parenthesis that are no call of a user's function: SQL keywords and type
   * names, and built-in functions that leave nothing on the session (pg_catalog's, which
   * PostgreSQL resolves first unless a search_path names pg_catalog after another schema).
   */
  private static final String[] HARMLESS = {
      // keywords and type names before a parenthesis
      "all", "analyse", "analyze", "and", "any", "array", "as", "at", "between", "bit", "by",
      "case", "cast", "char", "character", "check", "cluster", "coalesce", "collate", "conflict",
      "constraint", "copy", "cube", "dec", "decimal", "default", "distinct", "do", "else", "enum",
      "except", "exclude", "exists", "explain", "extract", "filter", "float", "following", "for",
      "foreign", "from", "greatest", "group", "grouping", "groups", "having", "ilike", "in",
      "include", "index", "insert", "intersect", "interval", "into", "is", "join", "key", "lateral",
      "least", "like", "limit", "matched", "nchar", "normalize", "not", "nullif", "numeric", "of",
      "offset", "on", "only", "or", "order", "over", "overlay", "partition", "position",
      "preceding", "primary", "range", "recursive", "references", "reindex", "returning", "rollup",
      "row", "rows", "select", "set", "sets", "similar", "some", "substring", "table",
      "tablesample", "then", "time", "timestamp", "timestamptz", "timetz", "to", "treat", "trim",
      "union", "unique", "update", "using", "vacuum", "values", "varbit", "varchar", "varying",
      "when", "where", "window", "with", "within", "xmlattributes", "xmlconcat", "xmlelement",
      "xmlexists", "xmlforest", "xmlparse", "xmlpi", "xmlroot", "xmlserialize",
      // built-in functions that set nothing on the session
      "abs", "age", "array_agg", "array_append", "array_cat", "array_dims", "array_length",
      "array_lower", "array_position", "array_positions", "array_prepend", "array_remove",
      "array_replace", "array_to_json", "array_to_string", "array_upper", "avg", "bit_and",
      "bit_or", "bool", "bool_and", "bool_or", "btrim", "cardinality", "ceil", "ceiling",
      "char_length", "character_length", "chr", "clock_timestamp", "concat", "concat_ws",
      "convert_from", "convert_to", "corr", "count", "cume_dist", "current_database",
      "current_schema", "current_schemas", "current_setting", "currval", "date", "date_bin",
      "date_part", "date_trunc", "decode", "dense_rank", "div", "encode", "every", "exp",
      "first_value", "float4", "float8", "floor", "format", "gen_random_uuid", "generate_series",
      "generate_subscripts", "inet_server_addr", "inet_server_port", "initcap", "int2", "int4",
      "int8", "isfinite", "json", "json_agg", "json_array_elements", "json_array_elements_text",
      "json_array_length", "json_build_array", "json_build_object", "json_each",
      "json_each_text", "json_extract_path", "json_extract_path_text", "json_object_agg",
      "json_object_keys", "json_populate_record", "json_populate_recordset", "json_strip_nulls",
      "json_to_record", "json_to_recordset", "json_typeof", "jsonb", "jsonb_agg",
      "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_array_length",
      "jsonb_build_array", "jsonb_build_object", "jsonb_each", "jsonb_each_text",
      "jsonb_extract_path", "jsonb_extract_path_text", "jsonb_insert", "jsonb_object_agg",
      "jsonb_object_keys", "jsonb_path_exists", "jsonb_path_match", "jsonb_path_query",
      "jsonb_path_query_array", "jsonb_path_query_first", "jsonb_populate_record",
      "jsonb_populate_recordset", "jsonb_pretty", "jsonb_set", "jsonb_strip_nulls",
      "jsonb_to_record", "jsonb_to_recordset", "jsonb_typeof", "justify_days", "justify_hours",
      "justify_interval", "lag", "last_value", "lastval", "lead", "left", "length", "ln", "log",
      "lower", "lpad", "ltrim", "make_date", "make_interval", "make_time", "make_timestamp",
      "make_timestamptz", "max", "md5", "min", "mod", "mode", "nextval", "now", "nth_value",
      "ntile", "octet_length", "percent_rank", "percentile_cont", "percentile_disc",
      "pg_advisory_unlock", "pg_advisory_unlock_all", "pg_advisory_unlock_shared",
      "pg_advisory_xact_lock", "pg_advisory_xact_lock_shared", "pg_backend_pid",
      "pg_current_wal_insert_lsn", "pg_current_wal_lsn", "pg_current_xact_id",
      "pg_database_size", "pg_indexes_size", "pg_is_in_recovery", "pg_last_wal_receive_lsn",
      "pg_last_wal_replay_lsn", "pg_last_xact_replay_timestamp", "pg_notify",
      "pg_postmaster_start_time", "pg_relation_size", "pg_size_pretty", "pg_sleep",
      "pg_table_size", "pg_total_relation_size", "pg_try_advisory_xact_lock",
      "pg_try_advisory_xact_lock_shared", "pg_typeof", "phraseto_tsquery", "pi",
      "plainto_tsquery", "power", "quote_ident", "quote_literal", "quote_nullable", "random",
      "rank", "regexp_count", "regexp_instr", "regexp_like", "regexp_match", "regexp_matches",
      "regexp_replace", "regexp_split_to_array", "regexp_split_to_table", "regexp_substr",
      "repeat", "replace", "reverse", "right", "round", "row_number", "row_to_json", "rpad",
      "rtrim", "setval", "sign", "split_part", "sqrt", "starts_with", "statement_timestamp",
      "stddev", "stddev_pop", "stddev_samp", "string_agg", "string_to_array", "strpos", "sum",
      "text", "timeofday", "timezone", "to_char", "to_date", "to_hex", "to_json", "to_jsonb",
      "to_number", "to_timestamp", "to_tsquery", "to_tsvector", "transaction_timestamp",
      "translate", "trunc", "ts_headline", "ts_rank", "txid_current", "unnest", "upper", "uuid",
      "var_pop", "var_samp", "variance", "version", "websearch_to_tsquery", "width_bucket"};

  /** Built-in functions whose effect outlives the transaction and no reset undoes. */
  private static final String[] STATEFUL_CALLS = {"pg_advisory_lock", "pg_advisory_lock_shared",
      "pg_try_advisory_lock", "pg_try_advisory_lock_shared", "setseed", "dblink_connect",
      "dblink_connect_u", "pg_replication_origin_session_setup"};

  /** Statements that cannot run an expression and leave nothing: decided by the first word. */
  private static final String[] INERT = {"abort", "begin", "checkpoint", "close", "commit",
      "deallocate", "end", "fetch", "lock", "move", "notify", "release", "rollback", "savepoint",
      "show", "start", "unlisten"};

  /** Statements whose expressions are scanned for calls. */
  private static final String[] SCANNED = {"alter", "analyse", "analyze", "cluster", "comment",
      "copy", "create", "delete", "drop", "explain", "grant", "insert", "merge", "refresh",
      "reindex", "revoke", "security", "select", "table", "truncate", "update", "vacuum",
      "values", "with"};

  /** Words before a name and its parenthesis that make it no call: a table, an alias, a type. */
  private static final String[] NAMED_NOT_CALLED = {"aggregate", "as", "copy", "exists",
      "function", "into", "procedure", "recursive", "references", "routine", "table", "type",
      "view", "with"};

  private static final String[][] HARMLESS_BY_LENGTH = byLength(HARMLESS);

  private SessionEffect() { }

  private static String[][] byLength(String[] words) {
    int max = 0;
    for (String w : words) max = Math.max(max, w.length());
    String[][] by = new String[max + 1][];
    for (int len = 0; len <= max; len++) {
      int n = 0;
      for (String w : words) if (w.length() == len) n++;
      by[len] = new String[n];
      n = 0;
      for (String w : words) if (w.length() == len) by[len][n++] = w;
    }
    return by;
  }

  /** The strongest effect of the statements in {@code sql}; {@link #NONE} for null. */
  static int of(String sql) {
    if (sql == null) return NONE;
    int effect = NONE;
    int n = sql.length();
    int i = skipSpace(sql, 0);
    while (i < n) {
      long r = statement(sql, i);
      if (r < 0) return UNSURE; // a literal the text alone cannot delimit
      effect = Math.max(effect, (int) (r & 0xff));
      i = skipSpace(sql, (int) (r >>> 8));
    }
    return effect;
  }

  /**
   * The effect of the statement starting at {@code i}, and where the next one starts: {@code
   * (next << 8) | effect}, or -1 when a literal cannot be delimited.
   */
  private static long statement(String s, int i) {
    int n = s.length();
    // JDBC escapes and parentheses before the first word: "{call f(?)}", "{? = call f(?)}"
    while (i < n && !isWordStart(s.charAt(i)) && s.charAt(i) != ';') {
      int e = tokenEnd(s, i);
      if (e < 0) return -1;
      i = skipSpace(s, e);
    }
    if (i >= n) return (long) n << 8;
    if (s.charAt(i) == ';') return (long) (i + 1) << 8;
    int firstEnd = tokenEnd(s, i);
    int effect;
    if (is(s, i, firstEnd, "set")) {
      effect = setEffect(s, skipSpace(s, firstEnd));
    } else if (is(s, i, firstEnd, "reset")) {
      effect = SETTING;
    } else if (is(s, i, firstEnd, "discard")) {
      int w = skipSpace(s, firstEnd);
      effect = wordAt(s, w, "all") ? SETTING : NONE;
    } else if (is(s, i, firstEnd, "listen") || is(s, i, firstEnd, "load")) {
      effect = STATEFUL;
    } else if (is(s, i, firstEnd, "prepare")) {
      effect = wordAt(s, skipSpace(s, firstEnd), "transaction") ? NONE : STATEFUL;
    } else if (oneOf(s, i, firstEnd, INERT)) {
      effect = NONE;
    } else if (is(s, i, firstEnd, "declare") || oneOf(s, i, firstEnd, SCANNED)) {
      int set = is(s, i, firstEnd, "select") ? setConfigStatement(s, skipSpace(s, firstEnd))
          : -1;
      if (set >= 0) return ((long) statementEnd(s, firstEnd) << 8) | set;
      return scan(s, i, firstEnd);
    } else {
      effect = UNSURE; // call, do, execute, import, and what this class does not know
    }
    int end = statementEnd(s, firstEnd);
    return end < 0 ? -1 : ((long) end << 8) | effect;
  }

  /** The effect of a SET statement whose second word starts at {@code i}. */
  private static int setEffect(String s, int i) {
    int n = s.length();
    if (i >= n) return NONE;
    int end = tokenEnd(s, i);
    if (end < 0) return UNSURE;
    if (is(s, i, end, "local") || is(s, i, end, "transaction") || is(s, i, end, "constraints")) {
      return NONE; // ends with the transaction
    }
    if (is(s, i, end, "session")) {
      int w = skipSpace(s, end);
      int e = w < n ? tokenEnd(s, w) : w;
      if (e < 0) return UNSURE;
      if (w < n && is(s, w, e, "seed")) return STATEFUL;
      return SETTING;
    }
    // seed (setseed's setting) is not undone by RESET ALL
    return is(s, i, end, "seed") ? STATEFUL : SETTING;
  }

  /**
   * {@code SELECT [pg_catalog.]set_config(name, value, is_local) [[AS] alias]} and nothing else,
   * from just after SELECT: {@link #SETTING} (or {@link #NONE} for a literal true is_local), or
   * -1 when the statement is anything else. The name must be a literal.
   */
  static int setConfigStatement(String s, int i) {
    int n = s.length();
    int e = nameEnd(s, i);
    if (e < 0 || !setConfigName(s, i, e)) return -1;
    i = skipSpace(s, e);
    if (i >= n || s.charAt(i) != '(') return -1;
    i = skipSpace(s, i + 1);
    if (i >= n || s.charAt(i) != '\'') return -1; // the name: a literal
    int local = 0;
    for (int arg = 0; arg < 3; arg++) {
      if (i >= n) return -1;
      int end = tokenEnd(s, i);
      if (end < 0) return -1;
      char c = s.charAt(i);
      boolean value = c == '\'' || c == '?' || (c == '$' && end > i + 1)
          || (arg == 2 && (is(s, i, end, "true") || is(s, i, end, "false")));
      if (!value) return -1;
      if (arg == 2) local = localValue(s, i);
      i = skipSpace(s, end);
      if (i >= n || s.charAt(i) != (arg == 2 ? ')' : ',')) return -1;
      i = skipSpace(s, i + 1);
    }
    // an alias, then the end of the statement
    if (i < n && wordAt(s, i, "as")) i = skipSpace(s, i + 2);
    if (i < n && (isWordStart(s.charAt(i)) || s.charAt(i) == '"')) {
      int end = tokenEnd(s, i);
      if (end < 0) return -1;
      i = skipSpace(s, end);
    }
    return i < n && s.charAt(i) != ';' ? -1 : local == 1 ? NONE : SETTING;
  }

  /** 1 when the is_local argument at {@code i} is a literal true, 0 otherwise (false or bound). */
  private static int localValue(String s, int i) {
    int end = tokenEnd(s, i);
    if (is(s, i, end, "true")) return 1;
    if (s.charAt(i) == '\'') {
      String v = s.substring(i + 1, end - 1).trim();
      return v.equalsIgnoreCase("t") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("on")
          || v.equalsIgnoreCase("yes") || v.equals("1") ? 1 : 0;
    }
    return 0;
  }

  /** Whether the name ending at {@code end} is set_config, unqualified or pg_catalog's. */
  private static boolean setConfigName(String s, int start, int end) {
    int last = s.lastIndexOf('.', end - 1);
    if (last >= start) {
      return is(s, last + 1, end, "set_config") && is(s, start, last, "pg_catalog");
    }
    return is(s, start, end, "set_config");
  }

  /** The end of a possibly qualified unquoted name at {@code i}, or -1. */
  private static int nameEnd(String s, int i) {
    int n = s.length();
    if (i >= n || !isWordStart(s.charAt(i))) return -1;
    int e = tokenEnd(s, i);
    while (e < n && s.charAt(e) == '.' && e + 1 < n && isWordStart(s.charAt(e + 1))) {
      e = tokenEnd(s, e + 1);
    }
    return e;
  }

  /**
   * Scans a statement for calls and the words that make it stateful; returns {@code (end << 8) |
   * effect} or -1.
   */
  private static long scan(String s, int start, int firstEnd) {
    boolean create = is(s, start, firstEnd, "create");
    boolean declare = is(s, start, firstEnd, "declare");
    boolean select = is(s, start, firstEnd, "select") || is(s, start, firstEnd, "with");
    int effect = create && temporaryCreate(s, skipSpace(s, firstEnd)) ? STATEFUL : NONE;
    int n = s.length();
    // The current name (possibly qualified: first . last), the word before it, and the previous
    // token when it was a word.
    int ctxStart = -1;
    int ctxEnd = -1;
    int firstStart = start;
    int firstEndOfName = firstEnd;
    int lastStart = start;
    int lastEnd = firstEnd;
    boolean quoted = false;
    int wordStart = start;
    int wordEnd = firstEnd;
    boolean afterDot = false;
    for (int i = skipSpace(s, firstEnd); i < n; ) {
      char c = s.charAt(i);
      if (c == ';') return ((long) (i + 1) << 8) | effect;
      int end = tokenEnd(s, i);
      if (end < 0) return -1;
      if (isWordStart(c) || c == '"') {
        if (c != '"') effect = Math.max(effect, wordEffect(s, i, end, wordStart, wordEnd, create,
            declare, select));
        if (afterDot) {
          lastStart = i;
          lastEnd = end;
          quoted |= c == '"';
        } else {
          ctxStart = wordStart;
          ctxEnd = wordEnd;
          firstStart = lastStart = i;
          firstEndOfName = lastEnd = end;
          quoted = c == '"';
        }
        wordStart = i;
        wordEnd = end;
        afterDot = false;
      } else if (c == '.' && wordStart >= 0 && !afterDot) {
        afterDot = true;
      } else {
        if (c == '(' && wordStart >= 0 && !afterDot) {
          boolean twoParts = lastStart == firstEndOfName + 1;
          int call = call(s, ctxStart, ctxEnd, lastStart != firstStart, twoParts
              && is(s, firstStart, firstEndOfName, "pg_catalog"), lastStart, lastEnd, quoted, i);
          if (call < 0) return -1;
          effect = Math.max(effect, call);
        }
        wordStart = -1;
        afterDot = false;
      }
      i = skipSpace(s, end);
    }
    return ((long) n << 8) | effect;
  }

  /** What one word of a scanned statement makes it: pg_temp, INTO TEMP, WITH HOLD. */
  private static int wordEffect(String s, int i, int end, int prevStart, int prevEnd,
                                boolean create, boolean declare, boolean select) {
    if (is(s, i, end, "pg_temp")) return create ? STATEFUL : UNSURE;
    if (prevStart < 0) return NONE;
    if (select && is(s, prevStart, prevEnd, "into")
        && (is(s, i, end, "temp") || is(s, i, end, "temporary"))) {
      return STATEFUL;
    }
    return declare && is(s, prevStart, prevEnd, "with") && is(s, i, end, "hold") ? STATEFUL
        : NONE;
  }

  /**
   * The effect of a name followed by a parenthesis: no call after a word such as INTO or AS, a
   * known built-in (unqualified or pg_catalog's), set_config with a literal true is_local, or an
   * unknown call.
   */
  private static int call(String s, int ctxStart, int ctxEnd, boolean qualified,
                          boolean inPgCatalog, int lastStart, int lastEnd, boolean quoted,
                          int paren) {
    if (ctxStart >= 0 && oneOf(s, ctxStart, ctxEnd, NAMED_NOT_CALLED)) return NONE;
    if (quoted || (qualified && !inPgCatalog)) return UNSURE; // e.g. a function of another schema
    if (oneOf(s, lastStart, lastEnd, STATEFUL_CALLS)) return STATEFUL;
    if (is(s, lastStart, lastEnd, "set_config")) return setConfigCall(s, paren);
    int len = lastEnd - lastStart;
    if (len < HARMLESS_BY_LENGTH.length) {
      for (String w : HARMLESS_BY_LENGTH[len]) {
        if (s.regionMatches(true, lastStart, w, 0, len)) return NONE;
      }
    }
    return UNSURE;
  }

  /** A set_config call inside a larger statement: harmless only with a literal true is_local. */
  private static int setConfigCall(String s, int paren) {
    int n = s.length();
    int i = skipSpace(s, paren + 1);
    for (int arg = 0; arg < 2; arg++) {
      if (i >= n) return UNSURE;
      int end = tokenEnd(s, i);
      if (end < 0) return -1;
      i = skipSpace(s, end);
      if (i >= n || s.charAt(i) != ',') return UNSURE;
      i = skipSpace(s, i + 1);
    }
    if (i >= n) return UNSURE;
    int end = tokenEnd(s, i);
    if (end < 0) return -1;
    if ((s.charAt(i) == '\'' || is(s, i, end, "true")) && localValue(s, i) == 1
        && skipSpace(s, end) < n && s.charAt(skipSpace(s, end)) == ')') {
      return NONE;
    }
    return UNSURE;
  }

  /** CREATE [OR REPLACE] [GLOBAL | LOCAL] {TEMP | TEMPORARY} …, not ON COMMIT DROP. */
  private static boolean temporaryCreate(String s, int i) {
    int n = s.length();
    for (int words = 0; words < 4 && i < n; words++) {
      int end = tokenEnd(s, i);
      if (end < 0) return true;
      if (is(s, i, end, "temp") || is(s, i, end, "temporary")) return !onCommitDrop(s, end);
      if (!is(s, i, end, "or") && !is(s, i, end, "replace") && !is(s, i, end, "global")
          && !is(s, i, end, "local")) {
        return false;
      }
      i = skipSpace(s, end);
    }
    return false;
  }

  /** Whether ON COMMIT DROP follows {@code from} in the statement. */
  private static boolean onCommitDrop(String s, int from) {
    int n = s.length();
    int prev2 = -1;
    int prev2End = -1;
    int prev = -1;
    int prevEnd = -1;
    for (int i = skipSpace(s, from); i < n && s.charAt(i) != ';'; ) {
      int end = tokenEnd(s, i);
      if (end < 0) return false;
      if (prev2 >= 0 && is(s, prev2, prev2End, "on") && is(s, prev, prevEnd, "commit")
          && is(s, i, end, "drop")) {
        return true;
      }
      prev2 = prev;
      prev2End = prevEnd;
      prev = i;
      prevEnd = end;
      i = skipSpace(s, end);
    }
    return false;
  }

  /** Whether raw SQL may end or rewind the transaction (COMMIT, ROLLBACK [TO], END, ABORT). */
  static boolean endsOrRewinds(String sql) {
    if (sql == null) return false;
    int n = sql.length();
    for (int i = skipSpace(sql, 0); i < n; ) {
      int end = tokenEnd(sql, i);
      if (end < 0) return true;
      if (is(sql, i, end, "commit") || is(sql, i, end, "rollback") || is(sql, i, end, "end")
          || is(sql, i, end, "abort")) {
        return true;
      }
      end = statementEnd(sql, end);
      if (end < 0) return true;
      i = skipSpace(sql, end);
    }
    return false;
  }

  private static boolean oneOf(String s, int start, int end, String[] words) {
    for (String w : words) {
      if (is(s, start, end, w)) return true;
    }
    return false;
  }
}
