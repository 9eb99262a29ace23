package dev.omnium.conformance;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A deliberately wrong wrapper around pgjdbc, the suite's negative control: when its session is
 * gone (SQLState class 08) it silently opens a new one and carries on, exactly the behaviour
 * issue 12 calls "a lost primary session is silently replaced". The suite must reject it.
 */
final class SilentlyRebindingConnection implements InvocationHandler {
  private final Sides.Opener opener;
  private Connection physical;

  private SilentlyRebindingConnection(Sides.Opener opener) throws SQLException {
    this.opener = opener;
    this.physical = opener.open();
  }

  static Connection open(Sides.Opener opener) throws SQLException {
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class}, new SilentlyRebindingConnection(opener));
  }

  @Override
  public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(physical, args);
    } catch (InvocationTargetException e) {
      Throwable t = e.getCause();
      if (t instanceof SQLException se && se.getSQLState() != null
          && se.getSQLState().startsWith("08") && !m.getName().equals("close")) {
        physical = opener.open();
        try {
          return m.invoke(physical, args);
        } catch (InvocationTargetException again) {
          throw again.getCause();
        }
      }
      throw t;
    }
  }
}
