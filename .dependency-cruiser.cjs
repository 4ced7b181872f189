/**
 * Module boundaries (docs/architecture.md "Modules"), checked by `npm run check:boundaries`.
 *
 * A module is a folder under src/modules. What it offers the rest of the code is its index.ts: anything else in
 * the folder is the module's own business, so another module, app.ts, a worker or a page can change nothing there
 * by reaching in. Shared helpers that belong to no one module (module-context.ts, status-change.ts) sit directly in
 * src/modules.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-deep-import-between-modules',
      comment: 'A module uses another module through its index.ts only (src/modules/<other>/index.ts).',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'no-deep-import-into-modules',
      comment: 'app.ts, http/, web/, workers/, cli/ and the rest use a module through its index.ts only.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/modules/', '^src/config/limits\\.ts$'] },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'limits-reexport-module-limits-only',
      comment: "config/limits.ts re-exports each module's limits.ts, so every limit is reachable in one place; nothing else of a module.",
      severity: 'error',
      from: { path: '^src/config/limits\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/limits\\.ts$' },
    },
    {
      name: 'no-http-in-services',
      comment: 'Services, repositories and the rest of a module are free of the HTTP edge: only its routes (and its plugin) use src/http.',
      severity: 'error',
      from: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/(routes|index|schemas)\\.ts$' },
      to: { path: '^src/http/' },
    },
    {
      name: 'routes-only-in-plugin',
      comment: "A module's routes are registered by its plugin (index.ts) only: no other file of the module loads its routes.ts.",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
      to: { path: '^src/modules/$1/routes\\.ts$' },
    },
    {
      name: 'no-repositories-in-web',
      comment: 'The dashboard and onboarding pages talk to services, never to repositories or the database tables.',
      severity: 'error',
      from: { path: '^src/web/' },
      to: { path: ['(^|/)repository\\.ts$', '^src/storage/tables\\.ts$'] },
    },
    {
      name: 'no-circular-modules',
      comment: 'Modules load in one direction: no cycle of imports that stay at run time (a type-only import is erased by the compiler).',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { circular: true, viaOnly: { path: '^src/modules/', dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
