package dev.omnium.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.security.cert.CertificateException;
import java.sql.SQLException;
import java.util.Properties;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

/**
 * The pieces of "no session without proven credentials" that need no server: which settings make
 * a credential set and how it is remembered (a salted digest, never the secret), when a proof is
 * forgotten, which login failures are refusals, the copy of pgjdbc's error a borrower gets, and a
 * standby's identity against the primary's.
 */
class CredentialProofsTest {
  private static final String BASE = "jdbc:omnium:postgresql://db1:5432,db2:5432/app"
      + "?replica=r1:5432&user=u";

  private static OmniumConfig config(String extra) throws SQLException {
    return OmniumConfig.of(BASE + extra, null);
  }

  @Test
  void theDigestCoversCredentialsAndTlsAndNothingElse() throws SQLException {
    byte[] salt = CredentialSet.salt();
    String base = CredentialSet.digest(salt, config("&password=secret-1"));
    assertEquals(base, CredentialSet.digest(salt, config("&password=secret-1")), "stable");
    assertEquals(base, CredentialSet.digest(salt, config("&password=secret-1&maxAge=9s"
        + "&ApplicationName=other&prepareThreshold=3")), "per-read and non-login settings");
    for (String other : new String[] {"&password=secret-2", "&password=secret-1&sslmode=require",
        "&password=secret-1&sslrootcert=/ca.pem", "&password=secret-1&replicaPassword=r",
        "&password=secret-1&replicaUser=ro", "&password=secret-1&socketFactory=x.Y",
        "&password=secret-1&authenticationPluginClassName=x.P",
        "&password=secret-1&gssEncMode=require"}) {
      assertNotEquals(base, CredentialSet.digest(salt, config(other)), other);
    }
    assertNotEquals(base, CredentialSet.digest(salt, OmniumConfig.of(BASE.replace("user=u",
        "user=v") + "&password=secret-1", null)), "another user");
    assertNotEquals(base, CredentialSet.digest(CredentialSet.salt(), config("&password=secret-1")),
        "another router's salt");
    assertFalse(base.contains("secret"), base);
  }

  @Test
  void aProofIsForgottenWhenTheServerRefusesTheCredentialsOrAfterMaxLifetime() throws Exception {
    RouterCredentials creds = new RouterCredentials(config("&password=one&maxLifetime=30m"));
    OmniumConfig one = config("&password=one");
    String d = creds.digest(one);
    assertTrue(creds.isCurrent(d));
    assertFalse(creds.isProven(d), "nothing is proven before a login");
    creds.proven(one, d);
    assertTrue(creds.isProven(d));
    creds.refused(d, new PSQLException("the server is starting up", PSQLState.CONNECTION_FAILURE));
    assertTrue(creds.isProven(d), "a server that is down says nothing of the credentials");
    assertFalse(creds.currentRefused());
    creds.refused(d, refusal("28P01", "password authentication failed for user \"u\""));
    assertFalse(creds.isProven(d), "refused for its credentials: no longer proven");
    assertTrue(creds.currentRefused());
    creds.loggedIn(d);
    assertTrue(creds.isProven(d));
    assertFalse(creds.currentRefused());

    RouterCredentials shortLived = new RouterCredentials(one, 1_000_000);
    String s = shortLived.digest(one);
    shortLived.proven(one, s);
    Thread.sleep(5);
    assertFalse(shortLived.isProven(s), "a proof lives at most maxLifetime without a login");
  }

  /**
   * A WAL sampler or heartbeat writer shared by several routers logs in with one set: its refusal
   * withdraws the proof of every router whose set that is, under each router's own digest, and of
   * no other; after a rotation it speaks for the router that rotated; a router that let go of it
   * is told nothing.
   */
  @Test
  void aSharedBackgroundSessionsLoginsCountForEveryRouterThatUsesItsSet() throws Exception {
    OmniumConfig one = config("&password=one&maxLifetime=30m");
    OmniumConfig two = config("&password=two&maxLifetime=30m");
    RouterCredentials a = new RouterCredentials(one);
    RouterCredentials b = new RouterCredentials(one);
    RouterCredentials c = new RouterCredentials(two);
    PgConnector connector = new PgConnector("jdbc:postgresql://db1:5432/app", new Properties(),
        "test sampler");
    BackgroundSessions.Followers followers =
        BackgroundSessions.Followers.reportingFrom(connector, one);
    BackgroundSessions.Shared<PrimaryWalSampler> shared =
        new BackgroundSessions.Shared<>(null, connector, followers);
    for (RouterCredentials r : new RouterCredentials[] {a, b, c}) {
      r.follow(Route.HEARTBEAT, shared);
    }
    a.proven(one, a.digest(one));
    b.proven(one, b.digest(one));
    c.proven(two, c.digest(two));

    followers.refused("shared", refusal("28P01", "password authentication failed for user \"u\""));
    assertTrue(a.currentRefused());
    assertTrue(b.currentRefused());
    assertFalse(a.isProven(a.digest(one)));
    assertFalse(c.currentRefused(), "another set");
    assertTrue(c.isProven(c.digest(two)));
    followers.loggedIn("shared");
    assertFalse(a.currentRefused());
    assertTrue(b.isProven(b.digest(one)));

    OmniumConfig three = config("&password=three&maxLifetime=30m");
    a.proven(three, a.digest(three)); // a rotates the shared session's credentials
    assertEquals(a.digest(three), connector.credentialSet());
    followers.refused("shared", refusal("28P01", "password authentication failed for user \"u\""));
    assertTrue(a.currentRefused());
    assertFalse(b.currentRefused(), "b's set is no longer the session's");

    a.unfollow(shared);
    followers.loggedIn("shared");
    assertTrue(a.currentRefused(), "a router that let go of the session is told nothing");
  }

  @Test
  void onlyAProvenSetBecomesTheRoutersAndReplicasTryItBeforeTakingIt() throws SQLException {
    OmniumConfig one = config("&password=one");
    RouterCredentials creds = new RouterCredentials(one);
    PgConnector primary = creds.track(Route.PRIMARY, new PgConnector(one.primaryUrl(),
        one.physicalProperties(Route.PRIMARY), "unit primary"));
    PgConnector replica = creds.track(Route.REPLICA, new PgConnector(one.replicaUrl(
        one.replicas().get(0)), one.physicalProperties(Route.REPLICA), "unit replica", true));
    String first = creds.digest(one);
    assertEquals(first, primary.credentialSet());
    OmniumConfig two = config("&password=two");
    String second = creds.digest(two);
    assertFalse(creds.isProven(second));
    assertTrue(creds.isCurrent(first), "a set no login proved changes nothing");
    creds.proven(two, second);
    assertTrue(creds.isCurrent(second), "proven on the primary: the router's now");
    assertEquals(second, primary.credentialSet(), "the primary side takes it at once");
    assertEquals(first, replica.credentialSet(), "a replica keeps its own until a login there");
    assertEquals(second, replica.candidateSet(), "and tries the new one first");
    assertFalse(primary.toString().contains("two"), "never shows the password");
  }

  @Test
  void atMostSixtyFourProofsAreKept() throws SQLException {
    RouterCredentials creds = new RouterCredentials(config("&password=p0"));
    String firstDigest = null;
    for (int i = 0; i <= RouterCredentials.PROOFS; i++) {
      OmniumConfig c = config("&password=p" + i);
      String d = creds.digest(c);
      if (i == 0) firstDigest = d;
      creds.loggedIn(d);
    }
    assertFalse(creds.isProven(firstDigest), "the least recently proven was dropped");
  }

  @Test
  void refusalsAreFailuresThatRepeatUntilSomethingChanges() {
    for (String state : new String[] {"28P01", "28000", "3D000", "42501", "08004"}) {
      assertTrue(SqlStates.loginRefused(new SQLException("x", state)), state);
    }
    for (String state : new String[] {"08001", "08006", "57P03", "53300", null}) {
      assertFalse(SqlStates.loginRefused(new SQLException("x", state)), String.valueOf(state));
    }
    SSLHandshakeException pkix = new SSLHandshakeException("PKIX path building failed");
    pkix.initCause(new CertificateException("unable to find valid certification path"));
    assertTrue(SqlStates.loginRefused(new PSQLException("SSL error: PKIX path building failed",
        PSQLState.CONNECTION_FAILURE, pkix)), "an untrusted server certificate");
    assertTrue(SqlStates.loginRefused(new PSQLException("The hostname db1 could not be verified"
        + " by hostnameverifier PgjdbcHostnameVerifier.", PSQLState.CONNECTION_FAILURE)));
    assertFalse(SqlStates.loginRefused(new PSQLException("SSL error: Remote host terminated the"
        + " handshake", PSQLState.CONNECTION_FAILURE, new SSLHandshakeException("EOF"))),
        "a server that went away during the handshake");
    assertFalse(SqlStates.loginRefused(new PSQLException("The connection attempt failed.",
        PSQLState.CONNECTION_UNABLE_TO_CONNECT, new IOException("reset"))));
    assertTrue(SqlStates.credentialsRefused(new SQLException("x", "28000")));
    assertFalse(SqlStates.credentialsRefused(new SQLException("x", "3D000")));
  }

  @Test
  void aBorrowerGetsACopyOfPgjdbcsErrorForTheRefusedLogin() {
    PSQLException original = refusal("28P01", "password authentication failed for user \"u\"");
    SQLException copy = PgjdbcErrors.refusedLogin(original);
    assertEquals(PSQLException.class, copy.getClass());
    assertEquals(original.getMessage(), copy.getMessage());
    assertEquals("28P01", copy.getSQLState());
    assertSame(original, copy.getCause());
    assertEquals(original.getServerErrorMessage().toString(),
        ((PSQLException) copy).getServerErrorMessage().toString());
    PSQLException tls = new PSQLException("SSL error: PKIX path building failed",
        PSQLState.CONNECTION_FAILURE, new SSLHandshakeException("PKIX"));
    SQLException tlsCopy = PgjdbcErrors.refusedLogin(tls);
    assertEquals(PSQLException.class, tlsCopy.getClass());
    assertEquals(tls.getMessage(), tlsCopy.getMessage());
    assertEquals("08006", tlsCopy.getSQLState());
  }

  @Test
  void aStandbyIsAReplicaOnlyWithThePrimarysIdentifierAndTimeline() {
    ServerIdentity primary = ServerIdentity.of("7715445825438873613", 2, false);
    assertEquals(ServerIdentity.Verdict.SAME,
        ServerIdentity.of("7715445825438873613", 2, true).against(primary));
    ServerIdentity other = ServerIdentity.of("7715446855930224840", 2, true);
    assertEquals(ServerIdentity.Verdict.FOREIGN_CLUSTER, other.against(primary));
    assertTrue(other.explain(ServerIdentity.Verdict.FOREIGN_CLUSTER, primary)
        .contains("7715446855930224840"));
    ServerIdentity left = ServerIdentity.of("7715445825438873613", 1, true);
    assertEquals(ServerIdentity.Verdict.DIVERGED_TIMELINE, left.against(primary));
    assertTrue(left.explain(ServerIdentity.Verdict.DIVERGED_TIMELINE, primary)
        .contains("timeline 1, the primary is on timeline 2"));
    ServerIdentity denied = ServerIdentity.unknown("GRANT EXECUTE ON FUNCTION pg_control_system()");
    assertEquals(ServerIdentity.Verdict.IDENTITY_UNKNOWN, denied.against(primary));
    assertEquals(ServerIdentity.Verdict.IDENTITY_UNKNOWN, left.against(denied));
    assertNull(denied.systemIdentifier);
  }

  /** pgjdbc's exception for a FATAL the server sent at login. */
  static PSQLException refusal(String state, String message) {
    return new PSQLException(new ServerErrorMessage("SFATAL\0VFATAL\0C" + state + "\0M"
        + message + "\0Rauth_failed\0"));
  }
}
