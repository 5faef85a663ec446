// DataSourceKitValues keeps records in ordered collections (swift-collections), which the
// package uses only with its default trait, Shell. An app that added the package with
// `traits: []` (the engine alone) and then imported this module gets this line rather than a
// missing module named inside the library.
#if !canImport(OrderedCollections)
  #error(
    "DataSourceKitValues needs the package's default trait, Shell: add the package without traits: [] (DataSourceKit alone needs none)"
  )
#endif
