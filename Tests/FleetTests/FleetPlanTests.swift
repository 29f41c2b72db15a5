import Config
import Fleet
import Testing

@Suite("Fleet plan and rollout decisions")
struct FleetPlanTests {
    static func target(_ name: String, _ stage: String?) -> FleetTarget { FleetTarget(name: name, url: "postgresql://h/\(name)", stage: stage) }

    @Test("stages run in the order [fleet] stages lists them, targets without a stage last, each stage in the file's order")
    func stageOrder() throws {
        let targets = [Self.target("p1", "production"), Self.target("c1", "canary"), Self.target("loose", nil), Self.target("p2", "production")]
        let plan = try FleetPlan(targets: targets, stageOrder: ["canary", "production"])
        #expect(plan.stages.map(\.name) == ["canary", "production", "default"])
        #expect(plan.stages.map { $0.targets.map(\.name) } == [["c1"], ["p1", "p2"], ["loose"]])
        // Without [fleet] stages, the file's first mention orders the stages.
        let unlisted = try FleetPlan(targets: targets, stageOrder: [])
        #expect(unlisted.stages.map(\.name) == ["production", "canary", "default"])
        // --stage keeps one stage; an unknown one is refused with the known ones.
        #expect(try FleetPlan(targets: targets, stageOrder: ["canary", "production"], only: "production").targets.map(\.name) == ["p1", "p2"])
        #expect(throws: FleetPlanError.unknownStage("staging", known: ["canary", "production", "default"])) {
            try FleetPlan(targets: targets, stageOrder: ["canary", "production"], only: "staging")
        }
        #expect(throws: FleetPlanError.noTargets(stage: nil)) { try FleetPlan(targets: [], stageOrder: []) }
    }

    /// Drives a rollout to its end: `fails` names the targets whose run fails; runs finish oldest first.
    static func drive(_ rollout: inout FleetRollout, fails: Set<String>) -> (order: [String], maxRunning: Int) {
        var running: [String] = []
        var order: [String] = []
        var maxRunning = 0
        while true {
            switch rollout.next() {
            case .start(let target):
                running.append(target.name)
                order.append(target.name)
                maxRunning = max(maxRunning, running.count)
            case .wait:
                let done = running.removeFirst()
                rollout.finished(done, fails.contains(done) ? .failed : .succeeded)
            case .finished:
                return (order, maxRunning)
            }
        }
    }

    static let fleet: [FleetTarget] = (1...3).map { target("c\($0)", "canary") } + (1...7).map { target("p\($0)", "production") }

    @Test("at most --parallel targets run at once, and every stage waits for the one before it")
    func parallelBound() throws {
        for parallel in [1, 2, 4, 8] {
            var rollout = FleetRollout(plan: try FleetPlan(targets: Self.fleet, stageOrder: ["canary", "production"]), parallel: parallel, continueOnError: false)
            let (order, maxRunning) = Self.drive(&rollout, fails: [])
            #expect(order == Self.fleet.map(\.name))
            #expect(maxRunning == min(parallel, 7))
            #expect(rollout.notStarted.isEmpty)
        }
        // The canary stage finishes before a production target starts.
        var rollout = FleetRollout(plan: try FleetPlan(targets: Self.fleet, stageOrder: ["canary", "production"]), parallel: 8, continueOnError: false)
        var running: Set<String> = []
        loop: while true {
            switch rollout.next() {
            case .start(let target):
                if target.stage == "production" { #expect(!running.contains { $0.hasPrefix("c") }) }
                running.insert(target.name)
            case .wait:
                let done = running.sorted().first!
                running.remove(done)
                rollout.finished(done, .succeeded)
            case .finished: break loop
            }
        }
    }

    @Test("a failing canary stops the rollout before production; without --continue-on-error, before the rest of its stage")
    func canaryFailure() throws {
        let plan = try FleetPlan(targets: Self.fleet, stageOrder: ["canary", "production"])
        var serial = FleetRollout(plan: plan, parallel: 1, continueOnError: false)
        let (order, _) = Self.drive(&serial, fails: ["c2"])
        #expect(order == ["c1", "c2"])
        #expect(serial.notStarted.map(\.name) == ["c3"] + (1...7).map { "p\($0)" })
        var going = FleetRollout(plan: plan, parallel: 1, continueOnError: true)
        let (goingOrder, _) = Self.drive(&going, fails: ["c2"])
        #expect(goingOrder == ["c1", "c2", "c3"])
        #expect(going.notStarted.map(\.name) == (1...7).map { "p\($0)" })
    }

    @Test("in the last stage, --continue-on-error runs every other target; without it the ones already running finish")
    func productionFailure() throws {
        let plan = try FleetPlan(targets: Self.fleet, stageOrder: ["canary", "production"])
        var going = FleetRollout(plan: plan, parallel: 3, continueOnError: true)
        let (order, _) = Self.drive(&going, fails: ["p3"])
        #expect(order == Self.fleet.map(\.name))
        #expect(going.notStarted.isEmpty)
        var stopping = FleetRollout(plan: plan, parallel: 3, continueOnError: false)
        let (stopped, _) = Self.drive(&stopping, fails: ["p1"])
        // p1 fails first; p2 and p3 were already running and finish; nothing after them starts.
        #expect(stopped == ["c1", "c2", "c3", "p1", "p2", "p3"])
        #expect(stopping.notStarted.map(\.name) == (4...7).map { "p\($0)" })
        // An unreachable target stops the rollout as a failure does.
        var unreachable = FleetRollout(plan: plan, parallel: 1, continueOnError: false)
        _ = unreachable.next()
        unreachable.finished("c1", .unreachable)
        #expect(unreachable.next() == .finished)
        #expect(unreachable.notStarted.count == 9)
    }

    @Test("an interrupt starts nothing more, even with --continue-on-error; the running targets finish; at any point of any plan")
    func interrupt() throws {
        let plan = try FleetPlan(targets: Self.fleet, stageOrder: ["canary", "production"])
        for parallel in [1, 3, 8] {
            for continueOnError in [false, true] {
                // Interrupted after each number of decisions: what ran plus what was left is the whole plan, once each.
                for cut in 0...30 {
                    var rollout = FleetRollout(plan: plan, parallel: parallel, continueOnError: continueOnError)
                    var running: [String] = [], started: [String] = [], decisions = 0
                    loop: while true {
                        if decisions == cut { rollout.interrupt() }
                        decisions += 1
                        switch rollout.next() {
                        case .start(let target):
                            #expect(!rollout.interrupted, "started \(target.name) after the interrupt")
                            running.append(target.name); started.append(target.name)
                        case .wait:
                            rollout.finished(running.removeFirst(), .succeeded)
                        case .finished:
                            break loop
                        }
                    }
                    #expect(running.isEmpty)
                    #expect(started + rollout.notStarted.map(\.name) == Self.fleet.map(\.name), "parallel \(parallel), cut \(cut)")
                }
            }
        }
    }

    @Test("the runner keeps the bound with real tasks and reports results in plan order")
    func runner() async throws {
        let plan = try FleetPlan(targets: Self.fleet, stageOrder: ["canary", "production"])
        let gauge = Gauge()
        var lines: [String] = []
        let run = await FleetRunner.run(plan, parallel: 3, continueOnError: true, work: { target in
            await gauge.enter()
            try? await Task.sleep(for: .milliseconds(target.name == "p1" ? 30 : 5))
            await gauge.leave()
            return (target.name == "p4" ? .failed : .succeeded, target.name.uppercased())
        }, progress: { lines.append($0.line) })
        #expect(run.results.map(\.report) == Self.fleet.map { $0.name.uppercased() })
        #expect(run.notStarted.isEmpty)
        #expect(await gauge.highest == 3)
        #expect(lines.count == 10)
        #expect(lines.last?.hasPrefix("fleet: 10/10 done, 1 failed") == true)
    }

    actor Gauge {
        var now = 0
        var highest = 0
        func enter() { now += 1; highest = max(highest, now) }
        func leave() { now -= 1 }
    }
}
