package dev.omnium.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Certificates made with {@code openssl} when a TLS cluster starts
 * ({@link PgCluster.Builder#tls()}): a certificate authority, the servers' certificate signed by
 * it (subject alternative names {@code localhost} and {@code 127.0.0.1}, so pgjdbc's
 * {@code sslmode=verify-full} accepts it), and a second authority that signed nothing, for a
 * client that trusts the wrong one. Nothing is cached: every cluster has keys of its own.
 */
public final class TlsFiles {
  private static final Duration CMD_TIMEOUT = Duration.ofMinutes(1);
  private static final String OPENSSL = "openssl";

  private final Path dir;

  private TlsFiles(Path dir) {
    this.dir = dir;
  }

  /** Makes the files in {@code dir} (created), the key readable by the server user alone. */
  static TlsFiles make(Path dir, ServerUser user) {
    FileTrees.mkdirs(dir, "rwxr-xr-x");
    TlsFiles f = new TlsFiles(dir);
    String days = "30";
    authority(f.rootKey(), f.rootCert(), "omnium sandbox CA", days);
    authority(dir.resolve("wrong-ca.key"), f.wrongRootCert(), "omnium sandbox wrong CA", days);
    openssl("the server key", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", f.serverKey().toString(), "-out", dir.resolve("server.csr").toString(),
        "-subj", "/CN=localhost");
    Path ext = dir.resolve("server.ext");
    try {
      Files.writeString(ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
          + "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
          + "extendedKeyUsage=serverAuth\n");
    } catch (IOException e) {
      throw new PgSandboxException("cannot write " + ext + ": " + e, e);
    }
    openssl("the server certificate", "x509", "-req", "-in", dir.resolve("server.csr").toString(),
        "-CA", f.rootCert().toString(), "-CAkey", f.rootKey().toString(), "-set_serial",
        serial(), "-days", days, "-extfile", ext.toString(), "-out", f.serverCert().toString());
    user.own(dir);
    try {
      // PostgreSQL refuses a private key that others may read
      Files.setPosixFilePermissions(f.serverKey(), PosixFilePermissions.fromString("rw-------"));
    } catch (IOException e) {
      throw new PgSandboxException("cannot restrict " + f.serverKey() + ": " + e, e);
    }
    return f;
  }

  private static void authority(Path key, Path cert, String name, String days) {
    openssl("the certificate authority " + name, "req", "-x509", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.toString(), "-out",
        cert.toString(), "-days", days, "-set_serial", serial(), "-subj", "/CN=" + name,
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  }

  private static void openssl(String what, String... args) {
    List<String> command = new ArrayList<>(List.of(OPENSSL));
    command.addAll(List.of(args));
    ProcessRunner.Result r;
    try {
      r = ProcessRunner.run(command, CMD_TIMEOUT);
    } catch (PgSandboxException e) {
      throw new PgSandboxException("cannot make " + what + " (is openssl installed?): "
          + e.getMessage(), e);
    }
    if (!r.ok()) {
      throw new PgSandboxException("openssl failed making " + what + ":\n" + r.output().strip());
    }
  }

  private static String serial() {
    return "0x" + Long.toHexString(new SecureRandom().nextLong() & Long.MAX_VALUE | 1);
  }

  /** @return the authority that signed the servers' certificate (PEM), for {@code sslrootcert} */
  public Path rootCert() {
    return dir.resolve("ca.crt");
  }

  /** @return an authority that signed nothing here: a client trusting it must refuse the server */
  public Path wrongRootCert() {
    return dir.resolve("wrong-ca.crt");
  }

  Path rootKey() {
    return dir.resolve("ca.key");
  }

  /** @return the servers' certificate (every node shares it) */
  Path serverCert() {
    return dir.resolve("server.crt");
  }

  /** @return the servers' private key, readable by the server user only */
  Path serverKey() {
    return dir.resolve("server.key");
  }

  /**
   * @return pgjdbc's URL parameters for a verified connection:
   *     {@code sslmode=verify-full&sslrootcert=<rootCert>}
   */
  public String verifyFull() {
    return "sslmode=verify-full&sslrootcert=" + rootCert();
  }

  /** @return the same with the wrong authority: pgjdbc refuses the server (08006, PKIX) */
  public String verifyFullWithWrongRoot() {
    return "sslmode=verify-full&sslrootcert=" + wrongRootCert();
  }

  @Override
  public String toString() {
    return "TlsFiles[" + dir + "]";
  }
}
