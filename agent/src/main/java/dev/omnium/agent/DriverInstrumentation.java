package dev.omnium.agent;

import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.Properties;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.scaffold.TypeValidation;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.utility.JavaModule;

/**
 * The Byte Buddy side: a raw transformer that inlines {@link ConnectAdvice} into
 * {@code org.postgresql.Driver.connect(String, Properties)}. Built on demand by
 * {@link Activation}'s gate, the first time a pgjdbc driver class is defined or retransformed.
 */
final class DriverInstrumentation {
  private static final ElementMatcher.Junction<MethodDescription> CONNECT = named("connect")
      .and(takesArguments(2))
      .and(takesArgument(0, String.class))
      .and(takesArgument(1, Properties.class))
      .and(returns(named("java.sql.Connection")));

  private DriverInstrumentation() { }

  static ClassFileTransformer build() {
    long start = System.nanoTime();
    // The advice needs no Nexus (no class format changes, no initializers): switching it off keeps
    // Byte Buddy from touching sun.misc.Unsafe, which Java 24+ reports on stderr. The name is
    // relocated with Byte Buddy, so it is private to this agent.
    if (System.getProperty("net.bytebuddy.nexus.disabled") == null) {
      System.setProperty("net.bytebuddy.nexus.disabled", "true");
    }
    ClassFileTransformer t = new AgentBuilder.Default(new ByteBuddy().with(TypeValidation.DISABLED))
        .disableClassFormatChanges()
        // Only a method visitor is added: decorating skips re-describing the whole type.
        .with(AgentBuilder.TypeStrategy.Default.DECORATE)
        .with(new Listener())
        .ignore(not(nameStartsWith("org.postgresql.")))
        .type(named(Activation.DRIVER))
        .transform(DriverInstrumentation::transform)
        .makeRaw();
    AgentLog.debug("Byte Buddy transformer built in " + (System.nanoTime() - start) / 1_000_000 + " ms");
    return t;
  }

  private static DynamicType.Builder<?> transform(DynamicType.Builder<?> builder, TypeDescription type,
      ClassLoader loader, JavaModule module, ProtectionDomain domain) {
    if (type.getDeclaredMethods().filter(CONNECT).isEmpty()) {
      AgentLog.warn(Activation.DRIVER + " in " + loader + " has no connect(String, Properties): this pgjdbc is not"
          + " supported, its connections run as plain pgjdbc");
      return builder;
    }
    return builder.visit(Advice.to(ConnectAdvice.class).on(CONNECT));
  }

  /** Reports what was and was not instrumented; an error leaves that pgjdbc untouched. */
  private static final class Listener extends AgentBuilder.Listener.Adapter {
    @Override
    public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module,
        boolean loaded, DynamicType dynamicType) {
      AgentLog.debug("instrumented " + type.getName() + " in " + loader + (loaded ? " (retransformed)" : ""));
    }

    @Override
    public void onError(String typeName, ClassLoader loader, JavaModule module, boolean loaded,
        Throwable throwable) {
      AgentLog.warn("cannot instrument " + typeName + " in " + loader + ": " + throwable
          + ". Its connections run as plain pgjdbc.");
    }
  }
}
