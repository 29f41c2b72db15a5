import HTTP

extension StorageClient: CancellableClient {}

/// A Storage client used from async code (see `ClientSession`).
public typealias StorageSession = ClientSession<StorageClient>
