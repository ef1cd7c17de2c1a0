// Public exports of this part of the package; src/index.ts re-exports them all.
export {}
