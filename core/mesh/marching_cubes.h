// Marching-cubes mesher: one chunk's occupancy -> welded triangles with materials.
//
// The scalar field is the solid occupancy sampled at voxel centres (water and air count as 0);
// the surface is its iso-level at half occupancy (127.5, between the blocky "filled" threshold 128
// and 127), interpolated linearly along lattice edges.
//
// Cell ownership: a cell is the cube between 8 neighbouring voxel centres; chunk K owns the cells
// whose low corner voxel lies in K. So the mesh of K covers [8K + 0.5, 8K + 8.5] in voxel units on
// each axis. Every cell of the world is meshed by exactly one chunk; the mesh of the chunk just
// below the world's min corner (outside the world, all air) closes the surface at the world's low
// faces. Vertex placement also reads one voxel beyond each edge (slopes where the occupancy is
// clamped, see EdgePoint in marching_cubes.cc), so a mesh reads local voxels [-1, 9] per axis:
// K and its 26 neighbours. A voxel change affects the meshes of chunks
// ChunkOf(v - 2) .. ChunkOf(v + 1) per axis (MeshChunksReading).
//
// Seams: a vertex is computed only from its global lattice edge (low endpoint voxel, axis) and the
// two occupancies in low-to-high order, so both chunks at a seam produce bit-identical positions.
#pragma once

#include <array>

#include "core/mesh/chunk_mesh.h"
#include "core/voxel/chunk.h"
#include "core/voxel/world.h"

namespace voxcol {

// Occupancy threshold of the iso-surface, in occupancy units (0..255).
constexpr float kIsoOccupancy = 127.5f;

// The chunks a mesh reads: sources[MeshSourceIndex(dx, dy, dz)] is chunk key + (dx, dy, dz) for
// d in {-1, 0, 1}.
constexpr int MeshSourceIndex(int dx, int dy, int dz) {
  return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
}
struct MeshSources {
  ChunkKey key;  // the chunk meshed
  std::array<ChunkPtr, 27> chunks;
  // Bit MeshSourceIndex(d) set: neighbour d is the generator's and not resident, so chunks[d] is
  // not the world's chunk but holds only what GatherMeshSources generated of it (of an upper
  // neighbour its first layer, the mesh's cell corners; of a lower one nothing). MeshChunk
  // generates the few voxels beyond the cell corners (the shell: one coordinate -1 or 9, the
  // slopes that place vertices next to the chunk's faces) that it reads, one at a time, from
  // `world` (World::GeneratedVoxel), which must outlive the sources.
  uint32_t generator_parts = 0;
  const World* world = nullptr;

  const ChunkPtr& operator[](int index) const { return chunks[index]; }
  ChunkPtr& operator[](int index) { return chunks[index]; }
};

// Chunks whose meshes read some voxel of `voxels` (max exclusive), max exclusive.
inline IntBox MeshChunksReading(const IntBox& voxels) {
  return {ChunkOf(voxels.min - Int3{2, 2, 2}), ChunkOf(voxels.max) + Int3{1, 1, 1}};
}

// Fetches the 27 source chunks of `key` from the world (chunks outside the world read as air).
// The chunk itself is the world's, and so is a neighbour that is resident, stored or edited. Of a
// neighbour that is the generator's content and not resident, a mesh reads its cell corners (of
// an upper neighbour, the layer NeighbourPart) and a few voxels of its shell (of a lower
// neighbour, NeighbourPart; of an upper one, the layer beyond it): only the corners are
// generated ahead, into a chunk of its own that the world does not hold (World::GeneratePart),
// and the shell voxels when MeshChunk reads them (MeshSources::generator_parts). Nothing but the
// chunk itself is made resident.
MeshSources GatherMeshSources(const World& world, const ChunkKey& key);

// Meshes the cells owned by chunk `key` into `out` (cleared first; its capacity is reused), and
// sets *solid_cells (unless null) to its cells without triangles that lie inside the solid.
// Positions are in world units for the given voxel size. `sources` are GatherMeshSources' for
// `key`, or any 27 non-null chunks with generator_parts 0.
void MeshChunk(const MeshSources& sources, const ChunkKey& key, float voxel_size, ChunkMesh* out,
               SolidCells* solid_cells = nullptr);

// Convenience: gathers the sources from `world` and meshes.
ChunkMesh MeshChunk(const World& world, const ChunkKey& key, SolidCells* solid_cells = nullptr);

// Chunks whose meshes may contain surface inside the world: the world's chunks plus one layer
// below the min faces. Max exclusive.
inline IntBox MeshedChunkRange(const World& world) {
  IntBox range = world.chunk_bounds();
  range.min = range.min - Int3{1, 1, 1};
  return range;
}

}  // namespace voxcol
