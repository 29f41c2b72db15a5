/// Storage's answer to `DELETE /object/{bucket}`: a JSON array of the objects it deleted (names it did not find are
/// left out). Items that are not objects with a string `name` are skipped; a body that is not an array is nil.
enum DeleteAnswer {
    static func objects(in body: [UInt8], bucket: String) -> [(name: String, bucketID: String)]? {
        guard let items = JSONValue.parse(body)?.array else { return nil }
        return items.compactMap { item in
            guard let object = item.object, case .string(let name)? = object["name"] else { return nil }
            let bucketID: String
            if case .string(let id)? = object["bucket_id"] { bucketID = id } else { bucketID = bucket }
            return (name, bucketID)
        }
    }
}
