package dev.omnium.ops;

import java.util.regex.Pattern;

/** Keeps passwords out of everything omnium-ops prints. */
final class Secrets {
  private static final Pattern PASSWORD = Pattern.compile("(?i)((?:password|sslpassword)=)[^&;]*");

  private Secrets() {
  }

  /** The URL with every password value replaced by {@code ***}. */
  static String mask(String url) {
    return url == null ? null : PASSWORD.matcher(url).replaceAll("$1***");
  }
}
