package io.payonce.account;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.List;

/** Newest entries first; pass {@code nextBeforeId} as {@code beforeId} for the page after. Null at the end. */
@RegisterForReflection
public record EntryPage(List<Entry> entries, Long nextBeforeId) {
}
