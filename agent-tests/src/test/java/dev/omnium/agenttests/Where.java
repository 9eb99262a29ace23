package dev.omnium.agenttests;

/** One {@code WHERE unit inRecovery port application_name} line of a test application. */
record Where(String unit, boolean inRecovery, int port, String applicationName) {
  static Where parse(String line) {
    String[] f = line.split(" ", 5);
    if (f.length != 5 || !"WHERE".equals(f[0])) throw new IllegalArgumentException("not a WHERE line: " + line);
    return new Where(f[1], Boolean.parseBoolean(f[2]), Integer.parseInt(f[3]), f[4]);
  }

  boolean isRead() {
    return unit.contains("read");
  }

  boolean isWrite() {
    return unit.contains("write");
  }

  @Override
  public String toString() {
    return unit + "@" + port + (inRecovery ? "(replica)" : "(primary)") + "[" + applicationName + "]";
  }
}
