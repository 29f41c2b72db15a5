#if canImport(Glibc)
import Glibc
#endif
import FileSystem

/// Which users `ctl` believes to be the daemon: root, the caller's own user, and the owner of the socket's folder
/// when only root could have given that folder to it (a parent owned by root that no one else may write, and a
/// folder no one but its owner may write). A socket in a shared folder such as /tmp is trusted only from root or
/// the caller: anyone could have made it.
enum ServerTrust {
    static func users(forSocket path: String) -> (users: Set<UInt32>, folderOwner: UInt32?) {
        var users: Set<UInt32> = [0, geteuid()]
        let folder = FolderTrust.split(path).folder
        guard let resolved = realpath(folder, nil) else { return (users, nil) }
        let real = String(cString: resolved)
        free(resolved)
        let parent = FolderTrust.split(real).folder
        guard real != "/", let folderStatus = try? FileStatus.of(real), let parentStatus = try? FileStatus.of(parent),
              folderStatus.kind == .folder, !folderStatus.sharedWritable,
              parentStatus.kind == .folder, parentStatus.owner == 0, !parentStatus.sharedWritable else { return (users, nil) }
        users.insert(folderStatus.owner)
        return (users, folderStatus.owner)
    }

    /// Throws unless the server behind `fd` runs as one of `users(forSocket:)`.
    static func check(_ fd: Int32, path: String) throws(ControlClientError) {
        guard let peer = PeerCredentials.of(fd) else {
            throw ControlClientError(.untrusted, "cannot tell who answers on \(path) (SO_PEERCRED: \(String(cString: strerror(errno)))); refusing to talk to it")
        }
        let (users, folderOwner) = users(forSocket: path)
        guard !users.contains(peer.uid) else { return }
        let owner = folderOwner.map { ", or the owner of its folder (uid \($0))" } ?? ""
        throw ControlClientError(.untrusted, "the process answering on \(path) (pid \(peer.pid)) runs as uid \(peer.uid), not as root, you (uid \(geteuid()))\(owner): it is not steward's daemon, or the socket sits in a folder others may write; refusing to talk to it")
    }
}
