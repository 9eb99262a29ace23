package dev.omnium.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * What decides whether a login succeeds: who logs in, with what secret, over which TLS and which
 * socket, to which servers and database. A router remembers the sets a login proved by a salted
 * SHA-256 digest of these values (the salt is the router's own, random), never the values: a
 * digest cannot be turned back into a password, and another router's digest of the same set
 * differs.
 *
 * <p>The set: the primary hosts and the database; {@code user} and {@code replicaUser}; every
 * secret key ({@code password}, {@code replicaPassword}, {@code sslpassword}, any key naming a
 * password, passphrase or secret); every pgjdbc key that chooses or configures authentication or
 * TLS ({@code ssl*}, {@code gss*}, {@code jaas*}, {@code kerberosServerName},
 * {@code sspiServiceClass}, {@code useSpnego}, {@code channelBinding},
 * {@code authenticationPluginClassName}); the socket ({@code socketFactory*},
 * {@code localSocketAddress}, which pg_hba.conf may match); {@code service} (a service file may
 * name any of them) and {@code replication} (pg_hba.conf has lines of its own for it).
 */
final class CredentialSet {
  private static final Set<String> KEYS = Set.of("user", "replicauser", "kerberosservername",
      "sspiserviceclass", "usespnego", "channelbinding", "authenticationpluginclassname",
      "localsocketaddress", "service", "replication");
  private static final List<String> PREFIXES = List.of("ssl", "gss", "jaas", "socketfactory");
  private static final SecureRandom RANDOM = new SecureRandom();

  private CredentialSet() { }

  /** @return a new random salt, one per router */
  static byte[] salt() {
    byte[] salt = new byte[16];
    RANDOM.nextBytes(salt);
    return salt;
  }

  /** Whether {@code key} (an omnium or pgjdbc key) belongs to the credential set. */
  static boolean decidesLogin(String key) {
    if (Secrets.isSecretKey(key)) return true;
    String k = key.toLowerCase(Locale.ROOT);
    if (KEYS.contains(k)) return true;
    for (String prefix : PREFIXES) {
      if (k.startsWith(prefix)) return true;
    }
    return false;
  }

  /**
   * The salted digest of {@code config}'s credential set, Base64: equal for equal sets under one
   * salt. Cold path (a connect), never per statement.
   */
  static String digest(byte[] salt, OmniumConfig config) {
    Map<String, String> set = new TreeMap<>();
    set.put(" where", config.primaryHosts() + "/" + config.database());
    // the primary side's and the replica side's (replicaUser, replicaPassword) as they log in
    put(set, "", config.physicalProperties(Route.PRIMARY));
    put(set, "replica:", config.physicalProperties(Route.REPLICA));
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
    sha.update(salt);
    for (Map.Entry<String, String> e : set.entrySet()) {
      sha.update(e.getKey().getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      sha.update(String.valueOf(e.getValue()).getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
    }
    return Base64.getEncoder().encodeToString(sha.digest());
  }

  private static void put(Map<String, String> set, String prefix, Properties p) {
    for (String key : p.stringPropertyNames()) {
      if (decidesLogin(key)) set.put(prefix + key, p.getProperty(key));
    }
  }
}
