// Helpers for store tests: a temporary directory and a cave world wired to a store.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/store/store.h"
#include "core/worldgen/cave_generator.h"

namespace voxcol::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "voxcol-store-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path(const std::string& sub = "db") const { return path_ + "/" + sub; }

 private:
  std::string path_;
};

// A store and a cave world (seed 5, 128x96x128) that loads from it and persists edits into it.
struct StoredCaveWorld {
  std::unique_ptr<store::Store> store;
  std::unique_ptr<World> world;
};

inline StoredCaveWorld OpenStoredCaveWorld(const std::string& dir,
                                           const store::StoreOptions& options) {
  StoredCaveWorld w;
  w.store = *store::Store::Open(dir, options);
  WorldConfig config{{128, 96, 128}, 1.0f, 5};
  store::StoredWorld stored = *w.store->OpenWorld(config, CaveGenerator::kVersion);
  w.world = std::make_unique<World>(
      stored.config,
      std::make_unique<CaveGenerator>(stored.config.seed, WorldVoxelBounds(stored.config)));
  w.world->SetLoader(w.store.get());
  w.world->AddObserver(w.store.get());
  w.world->RestoreVersion(stored.version);
  return w;
}

inline StoredCaveWorld OpenStoredCaveWorld(const std::string& dir, bool sync = true,
                                           size_t idempotency_keys = 100000) {
  store::StoreOptions options;
  options.sync = sync;
  options.idempotency_keys = idempotency_keys;
  return OpenStoredCaveWorld(dir, options);
}

}  // namespace voxcol::testing
