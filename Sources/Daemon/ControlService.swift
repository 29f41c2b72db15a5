import Control

/// The control socket: answers requests (while the database is still being waited for, too) until cancelled.
struct ControlService: DaemonService {
    let server: ControlServer
    let listener: ControlServer.Listener
    let handler: ControlHandler

    func run() async throws {
        await server.serve(listener, immediate: { [handler] line, peer in handler.answerAtOnce(line, peer: peer) },
                           handler: { [handler] line, peer in await handler.handle(line, peer: peer) })
    }
}
