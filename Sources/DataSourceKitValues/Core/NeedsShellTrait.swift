// DataSourceKitValues keeps records in ordered collections (swift-collections), which the
// package uses only with its default trait, Shell. An app that added the package with
// `traits: []` (the engine alone) and then imported this module, or a product built on it
// (relational, rendering, files, databases, web), gets this line rather than a missing module
// named inside the library.
#if !canImport(OrderedCollections)
  #error(
    "DataSourceKitValues needs the package's default trait, Shell, and so does every product but DataSourceKit (Relational, Rendering, Files, SQLite, HTTP, Postgres, DataSourceScript): remove traits: [] from the package's dependency, or write traits: [.defaults]"
  )
#endif
