package dev.omnium.agent;

import java.util.Properties;
import java.util.function.Function;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * Inlined into {@code org.postgresql.Driver.connect(String, Properties)}. The inlined code only
 * references {@code java.base} ({@code java.sql} is in the platform loader, the agent in the system
 * loader, pgjdbc anywhere): it finds {@link ConnectBridge#DISPATCH} by name through the system class
 * loader. When that returns a connection, pgjdbc's body is skipped and the connection is returned;
 * when it returns an exception (the omnium connect's login failed, with pgjdbc's own error),
 * pgjdbc's body is skipped and the method throws it, as pgjdbc's connect would have; otherwise
 * pgjdbc connects as usual. Both advices suppress every throwable of their own, so an agent failure
 * (even a missing class) can only ever mean "pgjdbc's own connect".
 */
final class ConnectAdvice {
  private ConnectAdvice() { }

  @SuppressWarnings("unchecked")
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
  static Object enter(@Advice.This Object driver, @Advice.Argument(0) String url,
      @Advice.Argument(1) Properties info) throws ReflectiveOperationException {
    // The driver's own physical connects pay one property lookup, nothing more.
    if (info != null && info.getProperty(ConnectBridge.PHYSICAL_MARKER) != null) {
      return null;
    }
    Object dispatch = Class.forName(ConnectBridge.CLASS_NAME, true, ClassLoader.getSystemClassLoader())
        .getField(ConnectBridge.FIELD_NAME).get(null);
    return ((Function<Object[], Object>) dispatch).apply(new Object[] {driver, url, info});
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  static void exit(@Advice.Enter Object taken,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned,
      @Advice.Thrown(readOnly = false) Throwable thrown) {
    if (taken instanceof Throwable) {
      returned = null;
      thrown = (Throwable) taken;
    } else if (taken != null) {
      returned = taken;
    }
  }
}
