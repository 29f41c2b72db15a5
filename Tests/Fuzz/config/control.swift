// fuzz-modules: Control=ControlRequest.swift
import Control

/// libFuzzer entry: one control request line → the request parser (as the daemon decodes socket bytes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let request = try? ControlRequest(line: line) {
        _ = request.command.changes
    }
    return 0
}
