// SQLiteProvider reads through GRDB, which the package uses only with its default trait,
// Shell: without it, this line says so rather than a missing module inside the library.
#if !canImport(GRDB)
  #error(
    "DataSourceKitSQLite needs the package's default trait, Shell: add the package without traits: [] (DataSourceKit alone needs none)"
  )
#endif
