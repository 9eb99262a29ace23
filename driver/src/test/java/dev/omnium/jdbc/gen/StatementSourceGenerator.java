package dev.omnium.jdbc.gen;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.sql.CallableStatement;
import java.sql.PreparedStatement;
import java.util.Arrays;
import java.util.Comparator;
import java.util.StringJoiner;

/**
 * Prints the mechanical parts of the logical statements: the recording setters of
 * LogicalPreparedStatement and the CallableStatement-only methods of LogicalCallableStatement.
 * Run it and paste the output between the GENERATED markers when java.sql grows.
 * Usage: java driver/src/test/java/dev/omnium/jdbc/gen/StatementSourceGenerator.java prepared|callable
 */
public final class StatementSourceGenerator {
  public static void main(String[] args) {
    boolean callable = args.length > 0 && args[0].equals("callable");
    Class<?> iface = callable ? CallableStatement.class : PreparedStatement.class;
    Method[] methods = iface.getDeclaredMethods();
    Arrays.sort(methods, Comparator.comparing(StatementSourceGenerator::signature));
    for (Method m : methods) {
      if (Modifier.isStatic(m.getModifiers())) continue;
      String name = m.getName();
      Class<?>[] p = m.getParameterTypes();
      boolean setter = name.startsWith("set") && p.length >= 2 && (callable ? p[0] == String.class : p[0] == int.class);
      boolean register = name.equals("registerOutParameter");
      if (!callable && !setter) continue;
      StringBuilder sb = new StringBuilder("  @Override\n  public ");
      if (m.getTypeParameters().length > 0) {
        StringJoiner tp = new StringJoiner(", ", "<", "> ");
        for (var v : m.getTypeParameters()) tp.add(v.getName());
        sb.append(tp);
      }
      sb.append(type(m.getGenericReturnType())).append(' ').append(name).append('(');
      StringJoiner params = new StringJoiner(", ");
      StringJoiner argsList = new StringJoiner(", ");
      for (int i = 0; i < p.length; i++) {
        params.add(type(m.getGenericParameterTypes()[i]) + " a" + i);
        argsList.add("a" + i);
      }
      sb.append(params).append(") throws SQLException {\n");
      if (setter || register) {
        sb.append("    checkOpen();\n    params.").append(name).append('(').append(argsList).append(");\n");
      } else {
        sb.append("    ").append(m.getReturnType() == void.class ? "" : "return ")
            .append("callable().").append(name).append('(').append(argsList).append(");\n");
      }
      sb.append("  }\n");
      System.out.println(sb);
    }
  }

  private static String signature(Method m) {
    return m.getName() + Arrays.toString(m.getParameterTypes());
  }

  private static String type(Type t) {
    String s = t.getTypeName();
    s = s.replace("java.lang.", "").replace("java.sql.", "").replace("java.io.", "").replace("java.util.", "")
        .replace("java.net.", "").replace("java.math.", "");
    return s.replace("$", ".");
  }
}
