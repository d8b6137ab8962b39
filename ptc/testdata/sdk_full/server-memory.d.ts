type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

interface ToolArgsMap {
  /** Add new observations to existing entities in the knowledge graph */
  memory__add_observations: {
    observations: ({
      /** The name of the entity to add the observations to */
      entityName: string;
      /** An array of observation contents to add */
      contents: string[];
    } & Record<string, JsonValue>)[];
  } & Record<string, JsonValue>;
  /** Create multiple new entities in the knowledge graph */
  memory__create_entities: {
    entities: ({
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    } & Record<string, JsonValue>)[];
  } & Record<string, JsonValue>;
  /** Create multiple new relations between entities in the knowledge graph. Relations should be in active voice */
  memory__create_relations: {
    relations: ({
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    } & Record<string, JsonValue>)[];
  } & Record<string, JsonValue>;
  /** Delete multiple entities and their associated relations from the knowledge graph */
  memory__delete_entities: {
    /** An array of entity names to delete */
    entityNames: string[];
  } & Record<string, JsonValue>;
  /** Delete specific observations from entities in the knowledge graph */
  memory__delete_observations: {
    deletions: ({
      /** The name of the entity containing the observations */
      entityName: string;
      /** An array of observations to delete */
      observations: string[];
    } & Record<string, JsonValue>)[];
  } & Record<string, JsonValue>;
  /** Delete multiple relations from the knowledge graph */
  memory__delete_relations: {
    /** An array of relations to delete */
    relations: ({
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    } & Record<string, JsonValue>)[];
  } & Record<string, JsonValue>;
  /** Open specific nodes in the knowledge graph by their names */
  memory__open_nodes: {
    /** An array of entity names to retrieve */
    names: string[];
  } & Record<string, JsonValue>;
  /** Read the entire knowledge graph */
  memory__read_graph: Record<string, JsonValue>;
  /** Search for nodes in the knowledge graph based on a query */
  memory__search_nodes: {
    /** The search query to match against entity names, types, and observation content */
    query: string;
  } & Record<string, JsonValue>;
}

interface ToolOutputMap {
  memory__add_observations: {
    results: {
      entityName: string;
      addedObservations: string[];
    }[];
  };
  memory__create_entities: {
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
  };
  memory__create_relations: {
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  };
  memory__delete_entities: {
    success: boolean;
    message: string;
  };
  memory__delete_observations: {
    success: boolean;
    message: string;
  };
  memory__delete_relations: {
    success: boolean;
    message: string;
  };
  memory__open_nodes: {
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  };
  memory__read_graph: {
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  };
  memory__search_nodes: {
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  };
}

type ToolName = keyof ToolOutputMap

declare class ToolCallError extends Error {
  readonly name: "ToolCallError";
  readonly toolName: ToolName;
}

declare const tools: {
  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;
}
