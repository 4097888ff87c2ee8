/** A file dropped anywhere on the page, as a person drags one from their file manager. */
import { useEffect, useRef, useState } from 'preact/hooks';

function carriesFiles(event: DragEvent): boolean {
  return event.dataTransfer?.types.includes('Files') ?? false;
}

/**
 * Calls `onFile` with the first file dropped on the page while `enabled`; answers whether files
 * are being dragged over it, for the page to show where they would go.
 */
export function usePageDrop(onFile: (file: File) => void, enabled: boolean): boolean {
  const [dragging, setDragging] = useState(false);
  const latest = useRef(onFile);
  latest.current = onFile;
  useEffect(() => {
    if (!enabled) return undefined;
    // dragenter and dragleave come for each element crossed: the drag is over the page until they pair up.
    let depth = 0;
    const enter = (event: DragEvent): void => {
      if (!carriesFiles(event)) return;
      depth += 1;
      setDragging(true);
    };
    const over = (event: DragEvent): void => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
    };
    const leave = (event: DragEvent): void => {
      if (!carriesFiles(event)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const drop = (event: DragEvent): void => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      depth = 0;
      setDragging(false);
      const file = event.dataTransfer?.files[0];
      if (file) latest.current(file);
    };
    const listeners = { dragenter: enter, dragover: over, dragleave: leave, drop } as const;
    for (const [type, listener] of Object.entries(listeners))
      document.addEventListener(type, listener as EventListener);
    return () => {
      for (const [type, listener] of Object.entries(listeners))
        document.removeEventListener(type, listener as EventListener);
      setDragging(false);
    };
  }, [enabled]);
  return dragging;
}
