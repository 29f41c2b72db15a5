/// One rule one username breaks, with a detail a person can act on.
public struct UsernameFinding: Sendable, Equatable {
    public let rule: UsernameRule
    public let detail: String

    public init(_ rule: UsernameRule, _ detail: String) {
        self.rule = rule
        self.detail = detail
    }
}
