import Jobs

/// A fleet run gives each target its own Storage API (`StorageJob`).
extension OrphanAvatarsJob: StorageJob {
    public func using(storageURL url: String, serviceKeyFile keyFile: String) -> OrphanAvatarsJob {
        var settings = settings
        settings.storageURL = url
        settings.keyFile = keyFile
        return OrphanAvatarsJob(settings: settings)
    }
}
