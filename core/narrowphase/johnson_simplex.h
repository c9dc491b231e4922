// The simplex of GJK with Johnson's distance sub-algorithm, after Gilbert, Johnson and Keerthi,
// "A fast procedure for computing the distance between complex objects in three-dimensional space"
// (1988), and van den Bergen, "A Fast and Robust GJK Implementation for Collision Detection of
// Convex Objects" (JGT 1999): up to four points in slots 0..3, subsets as 4-bit masks, and the
// cofactors Delta_i(Y_s) of every subset cached in det_[mask][i] so that adding a point only
// computes the subsets that contain it.
#pragma once

#include "core/narrowphase/support.h"

namespace voxcol {

class JohnsonSimplex {
 public:
  void Reset() { bits_ = all_bits_ = 0; }
  bool Empty() const { return bits_ == 0; }
  // The origin lies inside the tetrahedron.
  bool Full() const { return bits_ == 0xf; }
  int Size() const;

  // True when w equals a point of the current simplex or the last point added: the
  // duplicate-support guard of van den Bergen (the ill-conditioned case of long thin CSO faces).
  bool Contains(const Vec3& w) const;
  // Adds p in a free slot and caches the new determinants. The current subset is not changed until
  // Closest() succeeds. Precondition: the current simplex has at most 3 points.
  void Add(const SupportPoint& p);
  // Sum of the determinants of the whole point set <= 0: the new point is affinely dependent.
  bool AffinelyDependent() const;
  // Johnson's sub-algorithm: finds the smallest subset containing the last point whose affine
  // closest point to the origin lies in its relative interior and passes the Voronoi tests, makes
  // it current and writes that point to *v. Returns false when no subset passes (rounding).
  bool Closest(Vec3* v);
  // The backup procedure of GJK: among all subsets with positive cofactors, the one whose closest
  // point is nearest the origin. Always succeeds (single points qualify).
  void BackupClosest(Vec3* v);
  // Largest |w|^2 of the current points, the scale for relative tolerances.
  float MaxVertexSq() const;
  // Barycentric combination of the a and b points of the current subset.
  void ClosestPoints(Vec3* a, Vec3* b) const;
  // Copies the current points to out[0..Size()).
  int Points(SupportPoint* out) const;
  // Replaces every w by x - (a - b) (the ray-cast origin moved to x) and recomputes the cache.
  void Rebase(const Vec3& x);
  // Removes the current point equal to w, if any (GJK-raycast re-adds it after a rebase).
  void Remove(const Vec3& w);

 private:
  void UpdateDeterminants();
  bool Valid(int s) const;
  bool Proper(int s) const;
  bool Flat() const;
  Vec3 Vector(int s) const;

  SupportPoint y_[4];
  // Double precision: the cofactors of thin CSO simplices cancel badly in float (a shallow
  // box-box overlap of 0.6% of the box size was missed with float cofactors).
  double dp_[4][4];    // dp_[i][j] = y_i . y_j
  double det_[16][4];  // det_[s][i] = Delta_i(Y_s)
  int bits_ = 0;       // current subset
  int last_ = 0;       // slot of the last point added
  int last_bit_ = 0;   // 1 << last_
  int all_bits_ = 0;   // bits_ | last_bit_
};

}  // namespace voxcol
