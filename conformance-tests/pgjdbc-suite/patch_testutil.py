"""The one change run.sh makes to pgjdbc's code, in its test helper TestUtil.java:

* the URL prefix comes from the system property pgjdbcSuite.urlPrefix (jdbc:postgresql: or
  jdbc:omnium:postgresql:);
* its server checks (version, standard_conforming_strings, escapeString, integer datetimes)
  unwrap PgConnection instead of testing `instanceof PgConnection` and casting: a wrapping
  driver's connection can never be an instance of that class.

Every replacement must apply exactly as expected: a different TestUtil fails here, loudly.
"""
import re
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()


def replace(old, new, count):
    global text
    found = text.count(old)
    if found != count:
        sys.exit(f"patch_testutil: expected {count} of {old!r} in {path}, found {found}")
    text = text.replace(old, new)


replace('new StringBuilder("jdbc:postgresql://")',
        'new StringBuilder(System.getProperty("pgjdbcSuite.urlPrefix", "jdbc:postgresql:")'
        ' + "//")', 1)
replace("    if (con instanceof PgConnection) {\n      return ((PgConnection) con).",
        "    PgConnection pg = unwrapPgConnection(con);\n    if (pg != null) {\n      return pg.",
        5)
helper = '''
  /** pgjdbc's connection behind {@code con} (itself, or what a wrapper unwraps to), or null. */
  private static @Nullable PgConnection unwrapPgConnection(Connection con) {
    try {
      return con.isWrapperFor(PgConnection.class) ? con.unwrap(PgConnection.class) : null;
    } catch (SQLException e) {
      return null;
    }
  }
'''
idx = text.rindex("}")
text = text[:idx] + helper + text[idx:]
if re.search(r"instanceof PgConnection", text):
    sys.exit("patch_testutil: an instanceof PgConnection check is left")
open(path, "w", encoding="utf-8").write(text)
print("patched " + path)
