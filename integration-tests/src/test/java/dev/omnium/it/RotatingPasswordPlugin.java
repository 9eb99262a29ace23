package dev.omnium.it;

import org.postgresql.plugin.AuthenticationPlugin;
import org.postgresql.plugin.AuthenticationRequestType;

/**
 * pgjdbc's {@code authenticationPluginClassName} convention, as a credential vault would use it:
 * every new session asks for the current password.
 */
public final class RotatingPasswordPlugin implements AuthenticationPlugin {
  static volatile String current = "pw-1";

  @Override
  public char[] getPassword(AuthenticationRequestType type) {
    return current.toCharArray();
  }
}
