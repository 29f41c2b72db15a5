// fuzz-modules: FileSystem OutputText StewardJSON StewardLog Config
import Config

/// Every form a key can take, in sections of their own, so the fuzzer reaches each parser the real keys use (the real
/// sections are declared in modules this harness does not build).
let schema = ConfigSchema(sections: [
    ConfigSection("forms", keys: [
        ConfigKey("forms", "text", ConfigValueType<String>.text.optional, default: nil, takes: "text"),
        ConfigKey("forms", "non_empty", ConfigValueType<String>.nonEmpty, default: "x", takes: "text"),
        ConfigKey("forms", "choice", .choice(["a", "b"]), default: "a", takes: "a or b"),
        ConfigKey("forms", "interval", .postgresInterval, default: "0", takes: "an interval"),
        ConfigKey("forms", "url", ConfigValueType<String>.url.optional, default: nil, takes: "a URL"),
        ConfigKey("forms", "secret_file", ConfigValueType<String>.secretFile.optional, default: nil, takes: "a file", secret: "a secret"),
        ConfigKey("forms", "path", .absolutePath(suffix: ".prom", shorterThan: 108), default: "/x.prom", takes: "a path"),
        ConfigKey("forms", "integer", .integer(-10...10), default: 0, takes: "a number"),
        ConfigKey("forms", "seconds", .seconds(0...ConfigNumber.maximumSeconds), default: 0, takes: "seconds"),
        ConfigKey("forms", "boolean", .boolean, default: false, takes: "true or false"),
        ConfigKey("forms", "list", .list, default: [], takes: "a list"),
        ConfigKey("forms", "non_empty_list", .nonEmptyList("name one"), default: ["x"], takes: "a list"),
        RepeatedConfigKey("forms", "repeated", .nonEmpty, takes: "text"),
    ]),
], families: ["job"])

/// libFuzzer entry: file bytes → the strict INI reader → every form's checks; plus the secret-file content check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let config = try? StewardConfig.parse(path: "fuzz.ini", bytes: bytes, schema: schema) {
        _ = config.secretFiles
    }
    _ = try? SecretFile.secret(from: bytes, path: "fuzz-secret", what: "secret")
    if let text = String(validating: bytes, as: UTF8.self) {
        _ = ConfigNumber.seconds(text, in: 0...ConfigNumber.maximumSeconds)
        _ = ConfigNumber.integer(text, in: -10...10)
        _ = ConfigNumber.postgresMilliseconds(text)
        _ = URLCheck.problem(text)
        for key in schema.keys { _ = key.readTakes(text) }
    }
    return 0
}
