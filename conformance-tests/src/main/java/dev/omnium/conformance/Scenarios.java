package dev.omnium.conformance;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The catalog: every scenario, grouped by behaviour, in a stable order. */
public final class Scenarios {
  private Scenarios() { }

  /** Collects the scenarios of one behaviour. */
  static final class Group {
    private final String name;
    private final List<Scenario> list = new ArrayList<>();

    Group(String name) {
      this.name = name;
    }

    Group add(String scenario, Scenario.Program program) {
      list.add(new Scenario(name, scenario, program));
      return this;
    }

    List<Scenario> scenarios() {
      return list;
    }
  }

  /** @return every scenario; ids are unique */
  public static List<Scenario> all() {
    List<Scenario> all = new ArrayList<>();
    all.addAll(TransactionScenarios.group().scenarios());
    all.addAll(SavepointScenarios.group().scenarios());
    all.addAll(BatchScenarios.group().scenarios());
    all.addAll(GeneratedKeyScenarios.group().scenarios());
    all.addAll(ResultScenarios.group().scenarios());
    all.addAll(CursorScenarios.group().scenarios());
    all.addAll(MetadataScenarios.group().scenarios());
    all.addAll(TypeScenarios.group().scenarios());
    all.addAll(CallableScenarios.group().scenarios());
    all.addAll(WarningScenarios.group().scenarios());
    all.addAll(KeptPrimaryScenarios.group().scenarios());
    all.addAll(LifecycleScenarios.group().scenarios());
    all.addAll(TransitionScenarios.group().scenarios());
    all.addAll(SessionStateScenarios.group().scenarios());
    all.addAll(SqlStateScenarios.group().scenarios());
    all.addAll(LostSessionScenarios.group().scenarios());
    all.addAll(ArgumentScenarios.group().scenarios());
    all.addAll(PgjdbcApiScenarios.group().scenarios());
    all.addAll(ParameterScenarios.group().scenarios());
    Set<String> ids = new HashSet<>();
    for (Scenario s : all) {
      if (!ids.add(s.id())) {
        throw new IllegalStateException("duplicate scenario " + s.id());
      }
    }
    return Collections.unmodifiableList(all);
  }
}
