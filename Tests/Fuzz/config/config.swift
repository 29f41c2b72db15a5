// fuzz-modules: FileSystem OutputText StewardJSON StewardLog Config
import Config

/// libFuzzer entry: file bytes → the strict INI reader → every key's checks; plus the secret-file content check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let config = try? StewardConfig.parse(path: "fuzz.ini", bytes: bytes) {
        _ = try? config.validate()
        _ = config.secretFiles
    }
    _ = try? SecretFile.secret(from: bytes, path: "fuzz-secret", what: "secret")
    if let text = String(validating: bytes, as: UTF8.self) {
        _ = ConfigNumber.seconds(text, in: 0...ConfigNumber.maximumSeconds)
        _ = ConfigNumber.integer(text, in: -10...10)
        _ = ConfigNumber.postgresMilliseconds(text)
        _ = URLCheck.problem(text)
    }
    return 0
}
