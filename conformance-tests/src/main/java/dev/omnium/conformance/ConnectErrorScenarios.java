package dev.omnium.conformance;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Connect errors (issue 30): one program per login pgjdbc refuses, each side connecting with the
 * case's settings. It records at which call connecting failed and how (the exception's class and
 * SQLState, as every scenario records a failure, and here also its message, which pgjdbc and
 * omnium must share: the server's or pgjdbc's own words), or, when the login succeeds, one query.
 * A HikariCP pool start fails with HikariCP's {@code PoolInitializationException} around the
 * driver's exception: both are recorded.
 */
public final class ConnectErrorScenarios {
  private ConnectErrorScenarios() { }

  /**
   * One login: what differs from the cluster's good settings.
   *
   * @param name the scenario's name
   * @param database the database in the URL
   * @param user the role
   * @param password its password
   * @param extra pgjdbc URL parameters, or empty
   */
  public record Case(String name, String database, String user, String password, String extra) {
    /** @return the case as one command-line argument for a forked JVM */
    public String encode() {
      return String.join("\t", name, database, user, password, extra);
    }

    /** @return the case {@link #encode()} made */
    public static Case decode(String arg) {
      String[] f = arg.split("\t", -1);
      return new Case(f[0], f[1], f[2], f[3], f[4]);
    }

    /** @return {@code base + database + "?" + ApplicationName=app&user=…&password=…&extra} */
    public String url(String base, String app) {
      return base + database + "?ApplicationName=" + app + "&user=" + user + "&password="
          + password + (extra.isEmpty() ? "" : "&" + extra);
    }
  }

  /**
   * The cases, against a cluster with scram-sha-256 passwords and TLS only ({@code hostssl}).
   *
   * @param database the cluster's database
   * @param user a role of it that logs in with {@code password}
   * @param rootCert the authority that signed the servers' certificate
   * @param wrongRootCert one that did not
   */
  public static List<Case> cases(String database, String user, String password, String rootCert,
      String wrongRootCert) {
    List<Case> cases = new ArrayList<>();
    cases.add(new Case("wrong-password", database, user, password + "-wrong", ""));
    cases.add(new Case("unknown-user", database, "no_such_role", password, ""));
    cases.add(new Case("unknown-database", "no_such_database", user, password, ""));
    cases.add(new Case("no-pg-hba-entry", database, user, password, "sslmode=disable"));
    cases.add(new Case("wrong-root-certificate", database, user, password,
        "sslmode=verify-full&sslrootcert=" + wrongRootCert));
    cases.add(new Case("missing-root-certificate", database, user, password,
        "sslmode=verify-full&sslrootcert=" + rootCert + ".missing"));
    cases.add(new Case("verified", database, user, password,
        "sslmode=verify-full&sslrootcert=" + rootCert));
    return cases;
  }

  /** @return the program of {@code c}: connect through the side's source, as described above */
  public static Scenario scenario(Case c) {
    return new Scenario("connect-errors", c.name(), r -> {
      Connection conn;
      try {
        conn = r.open();
      } catch (Exception e) {
        r.v("connect", Run.failure(e));
        Throwable cause = e instanceof SQLException ? null : e.getCause();
        if (cause != null) r.v("cause", Run.failure(cause));
        r.v("message", (cause != null ? cause : e).getMessage());
        return;
      }
      r.v("connect", "ok");
      r.q("select", conn, "SELECT 1");
    });
  }
}
