/// The stages of a rollout, in order, each with its targets: a pure decision from the targets and `[fleet] stages`.
public struct FleetPlan: Sendable, Equatable {
    public struct Stage: Sendable, Equatable {
        public let name: String
        public let targets: [FleetTarget]
    }

    public let stages: [Stage]

    /// Every target of the plan, stage by stage.
    public var targets: [FleetTarget] { stages.flatMap(\.targets) }

    /// Stages run in the order `[fleet] stages` lists them; stages no one lists (only possible without
    /// `[fleet] stages`) follow in the order the file first names them, and targets without a stage come last in
    /// `default`. Inside a stage, targets keep the file's order. `only` keeps one stage (`--stage`), `names` some targets.
    public init(targets: [FleetTarget], stageOrder: [String], only: String? = nil) throws(FleetPlanError) {
        var order = stageOrder
        for target in targets where !order.contains(target.stageName) && target.stage != nil { order.append(target.stageName) }
        if targets.contains(where: { $0.stage == nil }), !order.contains(FleetTarget.defaultStage) { order.append(FleetTarget.defaultStage) }
        if let only {
            guard order.contains(only) else { throw .unknownStage(only, known: order) }
            order = [only]
        }
        stages = order.map { name in Stage(name: name, targets: targets.filter { $0.stageName == name }) }.filter { !$0.targets.isEmpty }
        guard !stages.isEmpty else { throw .noTargets(stage: only) }
    }
}

/// Why no plan could be made; the command's usage or config error.
public enum FleetPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownStage(String, known: [String])
    case noTargets(stage: String?)

    public var description: String {
        switch self {
        case .unknownStage(let stage, let known):
            "no stage \"\(stage)\" (stages: \(known.isEmpty ? "none" : known.joined(separator: ", ")))"
        case .noTargets(let stage):
            stage.map { "stage \($0) has no targets" } ?? "no targets: add [target.NAME] sections with a url to the config"
        }
    }
}
