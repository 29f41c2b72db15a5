#if canImport(Glibc)
import Glibc
#endif
@testable import HTTP
import Storage
import StewardLog
import Testing

/// libcurl's result code carried across the HTTP boundary: a request that got no answer says why, as a code, through
/// `HTTPError` and on through `StorageError`.
@Suite("transport errors: libcurl's code through HTTP and Storage")
struct TransportErrorTests {
    /// A loopback TCP socket: listening (the kernel completes each connection, and nobody ever reads or answers) or
    /// only bound (a connection is refused). Closed at the end of `with`.
    struct Peer {
        let fd: Int32
        let port: Int

        static func with<T>(listening: Bool, _ body: (Peer) throws -> T) throws -> T {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(fd >= 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(bound == 0)
            if listening { try #require(listen(fd, 16) == 0) }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            try #require(named == 0)
            return try body(Peer(fd: fd, port: Int(UInt16(bigEndian: address.sin_port))))
        }

        var url: String { "http://127.0.0.1:\(port)" }
    }

    func failure(_ request: HTTPRequest, cancellation: HTTPCancellation = HTTPCancellation()) -> HTTPError? {
        do {
            _ = try HTTPClient(cancellation: cancellation).send(request)
            return nil
        } catch {
            return error
        }
    }

    @Test func aPeerThatNeverAnswersTimesOut() throws {
        try Peer.with(listening: true) { peer in
            let started = ContinuousClock.now
            let error = try #require(failure(HTTPRequest(method: "GET", url: peer.url + "/x", timeoutSeconds: 0.5)))
            #expect(error.code == .timedOut, "\(error)")
            #expect(error.curlCode == 28)
            #expect(error.requestTimedOut && !error.atDeadline)
            #expect(error.requestSent, "the request went out before the wait")
            #expect(ContinuousClock.now - started < .seconds(10))
        }
    }

    @Test func aRefusedPortCouldNotConnect() throws {
        try Peer.with(listening: false) { peer in
            let error = try #require(failure(HTTPRequest(method: "GET", url: peer.url + "/x", timeoutSeconds: 5)))
            #expect(error.code == .couldNotConnect, "\(error)")
            #expect(error.curlCode == 7)
            #expect(!error.requestTimedOut && !error.requestSent)
        }
    }

    @Test func theRunsDeadlineIsATimeoutButNotTheRequests() throws {
        try Peer.with(listening: true) { peer in
            let cancellation = HTTPCancellation(deadline: .now + .milliseconds(500))
            let error = try #require(failure(HTTPRequest(method: "GET", url: peer.url + "/x", timeoutSeconds: 30), cancellation: cancellation))
            #expect(error.code == .timedOut, "\(error)")
            #expect(error.atDeadline && !error.requestTimedOut)
        }
    }

    @Test func aCancelledTransferIsAborted() throws {
        try Peer.with(listening: true) { peer in
            let cancellation = HTTPCancellation()
            cancellation.cancel()
            let error = try #require(failure(HTTPRequest(method: "GET", url: peer.url + "/x", timeoutSeconds: 5), cancellation: cancellation))
            #expect(error.code == .abortedByCallback && error.cancelled)
        }
    }

    @Test func storageCarriesTheCodeOfAnAnswerThatNeverCame() throws {
        try Peer.with(listening: true) { peer in
            let client = try StorageClient(url: peer.url, key: "sb_secret_transport_test", logger: .silent)
            #expect {
                try client.deleteObjects(bucket: "avatars", names: ["a.jpeg"], retrying: .once, timeoutSeconds: 0.5)
            } throws: { error in
                guard let error = error as? StorageError else { return false }
                return error.kind == .network && error.transport?.code == .timedOut && error.transport?.requestTimedOut == true
                    && error.mayStillBeCarriedOut
            }
        }
        try Peer.with(listening: false) { peer in
            let client = try StorageClient(url: peer.url, key: "sb_secret_transport_test", logger: .silent)
            #expect {
                try client.deleteObjects(bucket: "avatars", names: ["a.jpeg"], retrying: .once, timeoutSeconds: 2)
            } throws: { error in
                guard let error = error as? StorageError else { return false }
                return error.kind == .network && error.transport?.code == .couldNotConnect && !error.mayStillBeCarriedOut
            }
        }
    }

    @Test func theNamedCodesAreLibcurlsNumbers() {
        #expect(HTTPError.Code.named.count == 10)
        for (code, number) in HTTPError.Code.named {
            #expect(code.rawValue == number, "\(code) is CURLcode \(number) in libcurl's header")
        }
    }

    @Test func codesNameThemselves() {
        #expect(HTTPError.Code.timedOut.description == "timed out")
        #expect(HTTPError.Code(rawValue: 7) == .couldNotConnect)
        #expect(HTTPError.Code(rawValue: 99).description == "curl 99")
    }
}
